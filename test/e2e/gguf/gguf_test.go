package gguf

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// reader walks the file as llama.cpp's gguf.cpp does, enough to check the
// layout: header, metadata, tensor infos, aligned data.
type reader struct {
	t *testing.T
	b []byte
	p int
}

func (r *reader) u32() uint32 { v := binary.LittleEndian.Uint32(r.b[r.p:]); r.p += 4; return v }
func (r *reader) u64() uint64 { v := binary.LittleEndian.Uint64(r.b[r.p:]); r.p += 8; return v }
func (r *reader) str() string { n := int(r.u64()); s := string(r.b[r.p : r.p+n]); r.p += n; return s }

func (r *reader) value(typ uint32) any {
	switch typ {
	case typeUint32, typeInt32, typeFloat32:
		return r.u32()
	case typeBool:
		r.p++
		return r.b[r.p-1] == 1
	case typeString:
		return r.str()
	case typeArray:
		et, n := r.u32(), r.u64()
		var out []any
		for i := uint64(0); i < n; i++ {
			out = append(out, r.value(et))
		}
		return out
	}
	r.t.Fatalf("unknown type %d at %d", typ, r.p)
	return nil
}

func TestTinyLlamaLayout(t *testing.T) {
	var buf bytes.Buffer
	f := TinyLlama(1)
	if err := Write(&buf, f); err != nil {
		t.Fatal(err)
	}
	r := &reader{t: t, b: buf.Bytes()}
	if string(r.b[:4]) != "GGUF" {
		t.Fatalf("magic %q", r.b[:4])
	}
	r.p = 4
	if v := r.u32(); v != 3 {
		t.Fatalf("version %d", v)
	}
	nt, nkv := r.u64(), r.u64()
	if int(nt) != len(f.Tensors) || int(nkv) != len(f.KVs) {
		t.Fatalf("%d tensors %d kvs, want %d %d", nt, nkv, len(f.Tensors), len(f.KVs))
	}
	kvs := map[string]any{}
	for i := uint64(0); i < nkv; i++ {
		k := r.str()
		kvs[k] = r.value(r.u32())
	}
	tokens := kvs["tokenizer.ggml.tokens"].([]any)
	if len(tokens) < 3+256+50 || tokens[0] != "<unk>" || tokens[1] != "<s>" || tokens[2] != "</s>" || tokens[3] != "<0x00>" || tokens[258] != "<0xFF>" {
		t.Errorf("vocabulary: %d tokens starting %v", len(tokens), tokens[:4])
	}
	if kvs["general.architecture"] != "llama" || kvs["tokenizer.ggml.model"] != "llama" {
		t.Errorf("architecture %v, tokenizer %v", kvs["general.architecture"], kvs["tokenizer.ggml.model"])
	}
	type info struct {
		n, off uint64
	}
	var infos []info
	for i := uint64(0); i < nt; i++ {
		name := r.str()
		dims := r.u32()
		n := uint64(1)
		for d := uint32(0); d < dims; d++ {
			n *= r.u64()
		}
		if typ := r.u32(); typ != typeF32 {
			t.Errorf("%s: type %d", name, typ)
		}
		off := r.u64()
		if off%Alignment != 0 {
			t.Errorf("%s: offset %d not aligned to %d", name, off, Alignment)
		}
		infos = append(infos, info{n, off})
	}
	data := (r.p + Alignment - 1) / Alignment * Alignment
	last := infos[len(infos)-1]
	if want := data + int(align(last.off+4*last.n)); len(r.b) != want {
		t.Errorf("file is %d bytes, want %d (data at %d)", len(r.b), want, data)
	}
	// The first tensor is token_embd: dimension 0 of every token is 20.
	vocab, embd := len(tokens), 64
	for tok := 0; tok < vocab; tok++ {
		at := data + int(infos[0].off) + 4*tok*embd
		if v := binary.LittleEndian.Uint32(r.b[at:]); v != 0x41a00000 { // 20.0f
			t.Fatalf("token %d: embedding dim 0 is %#x, want 20", tok, v)
		}
	}
}

func TestTinyLlamaDeterministic(t *testing.T) {
	write := func(seed uint64) []byte {
		var b bytes.Buffer
		if err := Write(&b, TinyLlama(seed)); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	if !bytes.Equal(write(7), write(7)) {
		t.Error("the same seed wrote different files")
	}
	if bytes.Equal(write(7), write(8)) {
		t.Error("two seeds wrote the same file")
	}
}

func TestWriteRefusesMismatchedDims(t *testing.T) {
	err := Write(&bytes.Buffer{}, File{Tensors: []Tensor{{Name: "x", Dims: []uint64{2, 3}, Data: make([]float32, 5)}}})
	if err == nil {
		t.Error("a 2x3 tensor with 5 values was written")
	}
}
