// Package gguf writes GGUF files, the model format of llama.cpp, small
// enough for the e2e to make its own model for a real llama-server: a
// header, key-value metadata and f32 tensors, each tensor's data aligned to
// 32 bytes (GGUF version 3). It writes only what TinyLlama needs; there is
// no reader beyond what the tests check.
package gguf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
)

// Alignment is GGUF's default general.alignment: every tensor's data
// starts at a multiple of it, counted from the start of the data section.
const Alignment = 32

// The value types of GGUF's metadata (gguf.h's enum gguf_type).
const (
	typeUint32  uint32 = 4
	typeInt32   uint32 = 5
	typeFloat32 uint32 = 6
	typeBool    uint32 = 7
	typeString  uint32 = 8
	typeArray   uint32 = 9
)

// typeF32 is ggml's GGML_TYPE_F32, the only tensor type written here.
const typeF32 uint32 = 0

// The token types of tokenizer.ggml.token_type (llama.cpp's
// llama_token_attr as gguf-py's TokenType numbers them).
const (
	TokenNormal  int32 = 1
	TokenUnknown int32 = 2
	TokenControl int32 = 3
	TokenByte    int32 = 6
)

// KV is one metadata entry. Value is a uint32, int32, float32, bool,
// string, []string, []float32 or []int32.
type KV struct {
	Key   string
	Value any
}

// Tensor is one f32 tensor. Dims are ggml's ne, innermost first: a matrix
// that maps n_in to n_out is {n_in, n_out} and Data holds n_out rows of
// n_in values.
type Tensor struct {
	Name string
	Dims []uint64
	Data []float32
}

// File is a GGUF file's content.
type File struct {
	KVs     []KV
	Tensors []Tensor
}

// Write writes f in GGUF version 3, byte for byte the same for the same f.
func Write(w io.Writer, f File) error {
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	str := func(s string) { le(uint64(len(s))); b.WriteString(s) }
	b.WriteString("GGUF")
	le(uint32(3))
	le(uint64(len(f.Tensors)))
	le(uint64(len(f.KVs)))
	for _, kv := range f.KVs {
		str(kv.Key)
		switch v := kv.Value.(type) {
		case uint32:
			le(typeUint32)
			le(v)
		case int32:
			le(typeInt32)
			le(v)
		case float32:
			le(typeFloat32)
			le(v)
		case bool:
			le(typeBool)
			le(v)
		case string:
			le(typeString)
			str(v)
		case []string:
			le(typeArray)
			le(typeString)
			le(uint64(len(v)))
			for _, s := range v {
				str(s)
			}
		case []float32:
			le(typeArray)
			le(typeFloat32)
			le(uint64(len(v)))
			le(v)
		case []int32:
			le(typeArray)
			le(typeInt32)
			le(uint64(len(v)))
			le(v)
		default:
			return fmt.Errorf("gguf: %s: unsupported value type %T", kv.Key, kv.Value)
		}
	}
	var offset uint64
	for _, t := range f.Tensors {
		n := uint64(1)
		for _, d := range t.Dims {
			n *= d
		}
		if n != uint64(len(t.Data)) {
			return fmt.Errorf("gguf: tensor %s: dims %v hold %d values, data has %d", t.Name, t.Dims, n, len(t.Data))
		}
		str(t.Name)
		le(uint32(len(t.Dims)))
		le(t.Dims)
		le(typeF32)
		le(offset)
		offset = align(offset + 4*n)
	}
	pad(&b)
	for _, t := range f.Tensors {
		le(t.Data)
		pad(&b)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func align(n uint64) uint64 { return (n + Alignment - 1) / Alignment * Alignment }

// pad fills b with zeros up to the next multiple of Alignment. The data
// section starts aligned in the file, so offsets inside it are too.
func pad(b *bytes.Buffer) {
	for b.Len()%Alignment != 0 {
		b.WriteByte(0)
	}
}

// TinyLlama's width, and its count of special and byte tokens (the ids
// below it), which TinyLoRA must match.
const (
	tinyEmbd     = 64
	tinySpecials = 3 + 256
)

// tinyVocab is TinyLlama's vocabulary: <unk>, <s>, </s>, the byte tokens,
// then the printable pieces.
func tinyVocab() (tokens []string, types []int32, scores []float32) {
	tokens = []string{"<unk>", "<s>", "</s>"}
	types = []int32{TokenUnknown, TokenControl, TokenControl}
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, TokenByte)
	}
	scores = make([]float32, len(tokens))
	pieces := []string{"\u2581"}
	for c := 'a'; c <= 'z'; c++ {
		pieces = append(pieces, string(c))
	}
	for _, c := range "0123456789.,!?'" {
		pieces = append(pieces, string(c))
	}
	for _, w := range []string{"the", "a", "is", "of", "and", "to", "in", "hello", "world", "cat", "dog", "model", "tiny", "test", "I", "you", "it"} {
		pieces = append(pieces, "\u2581"+w)
	}
	for i, p := range pieces {
		tokens = append(tokens, p)
		types = append(types, TokenNormal)
		scores = append(scores, -float32(i)/10-1)
	}
	return tokens, types, scores
}

// TinyLlama is a llama-architecture model of random weights, small enough
// to load in a fraction of a second: a SentencePiece ("llama") vocabulary
// of <unk>, <s>, </s>, the 256 byte tokens <0x00>…<0xFF> and about sixty
// pieces; 64 wide, 2 layers, 4 heads, a feed-forward of 128, a context of
// 512. The same seed gives the same bytes.
//
// Random weights would emit byte tokens, which llama-server cannot turn
// into valid UTF-8 (it answers 500 to every request), and could emit </s>
// at once. So dimension 0 of every token's embedding is a constant 20,
// which RMSNorm keeps strongly positive through the layers, and the output
// weights of dimension 0 are 0 for the pieces and -5 for the 259 special
// and byte tokens: sampling only ever picks a printable piece.
func TinyLlama(seed uint64) File {
	const layers, heads, ff, ctx = 2, 4, 128, 512
	const embd, specials = tinyEmbd, tinySpecials
	rng := rand.New(rand.NewPCG(seed, 0x696e6665726e6f)) // "inferno"
	normal := func(n int, scale float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * scale)
		}
		return v
	}
	ones := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = 1
		}
		return v
	}

	tokens, types, scores := tinyVocab()
	vocab := len(tokens)

	tokEmbd := normal(vocab*embd, 1)
	output := normal(vocab*embd, 0.5)
	for tok := 0; tok < vocab; tok++ {
		tokEmbd[tok*embd] = 20
		output[tok*embd] = 0
		if tok < specials {
			output[tok*embd] = -5
		}
	}
	mat := func(name string, in, out int, v []float32) Tensor {
		return Tensor{Name: name, Dims: []uint64{uint64(in), uint64(out)}, Data: v}
	}
	vec := func(name string, v []float32) Tensor {
		return Tensor{Name: name, Dims: []uint64{uint64(len(v))}, Data: v}
	}
	tensors := []Tensor{
		mat("token_embd.weight", embd, vocab, tokEmbd),
		vec("output_norm.weight", ones(embd)),
		mat("output.weight", embd, vocab, output),
	}
	for l := 0; l < layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		tensors = append(tensors,
			vec(p+"attn_norm.weight", ones(embd)),
			mat(p+"attn_q.weight", embd, embd, normal(embd*embd, 0.02)),
			mat(p+"attn_k.weight", embd, embd, normal(embd*embd, 0.02)),
			mat(p+"attn_v.weight", embd, embd, normal(embd*embd, 0.02)),
			mat(p+"attn_output.weight", embd, embd, normal(embd*embd, 0.02)),
			vec(p+"ffn_norm.weight", ones(embd)),
			mat(p+"ffn_gate.weight", embd, ff, normal(ff*embd, 0.02)),
			mat(p+"ffn_up.weight", embd, ff, normal(ff*embd, 0.02)),
			mat(p+"ffn_down.weight", ff, embd, normal(embd*ff, 0.02)),
		)
	}
	return File{
		KVs: []KV{
			{"general.architecture", "llama"},
			{"general.name", "inferno-e2e-tiny-llama"},
			{"general.file_type", uint32(0)}, // all f32
			{"llama.context_length", uint32(ctx)},
			{"llama.embedding_length", uint32(embd)},
			{"llama.block_count", uint32(layers)},
			{"llama.feed_forward_length", uint32(ff)},
			{"llama.attention.head_count", uint32(heads)},
			{"llama.attention.head_count_kv", uint32(heads)},
			{"llama.rope.dimension_count", uint32(embd / heads)},
			{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
			{"llama.vocab_size", uint32(vocab)},
			{"tokenizer.ggml.model", "llama"},
			{"tokenizer.ggml.pre", "default"},
			{"tokenizer.ggml.tokens", tokens},
			{"tokenizer.ggml.scores", scores},
			{"tokenizer.ggml.token_type", types},
			{"tokenizer.ggml.bos_token_id", uint32(1)},
			{"tokenizer.ggml.eos_token_id", uint32(2)},
			{"tokenizer.ggml.unknown_token_id", uint32(0)},
			{"tokenizer.ggml.add_bos_token", true},
			{"tokenizer.ggml.add_eos_token", false},
			// A plain template: the chat endpoint renders it with its
			// Jinja engine, and the model has no template of its own.
			{"tokenizer.chat_template", "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}"},
		},
		Tensors: tensors,
	}
}

// TinyLoRA is a LoRA adapter of TinyLlama, of the given rank: low-rank
// factors of output.weight only (lora_a is {64, rank}, lora_b {rank,
// vocabulary}), with alpha equal to the rank so that llama-server's scale
// is the request's own. Its rows of lora_b for the special and byte tokens
// are 0, so that the adapter, like the base model, only ever emits a
// printable piece; the same seed gives the same bytes, and a different one
// a different adapter.
func TinyLoRA(seed uint64, rank int) File {
	tokens, _, _ := tinyVocab()
	vocab := len(tokens)
	rng := rand.New(rand.NewPCG(seed, 0x6c6f7261)) // "lora"
	a := make([]float32, tinyEmbd*rank)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	b := make([]float32, rank*vocab)
	for tok := tinySpecials; tok < vocab; tok++ {
		for r := 0; r < rank; r++ {
			b[tok*rank+r] = float32(rng.NormFloat64())
		}
	}
	return File{
		KVs: []KV{
			{"general.architecture", "llama"},
			{"general.type", "adapter"},
			{"general.name", "inferno-e2e-tiny-lora"},
			{"adapter.type", "lora"},
			{"adapter.lora.alpha", float32(rank)},
		},
		Tensors: []Tensor{
			{Name: "output.weight.lora_a", Dims: []uint64{tinyEmbd, uint64(rank)}, Data: a},
			{Name: "output.weight.lora_b", Dims: []uint64{uint64(rank), uint64(vocab)}, Data: b},
		},
	}
}
