package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeDir makes a weights directory from a name → content map; a nil
// content makes a subdirectory.
func writeDir(t *testing.T, files map[string]*string) string {
	t.Helper()
	dir := t.TempDir()
	// In name order, so that a directory is made before its files.
	for _, name := range slices.Sorted(maps.Keys(files)) {
		content := files[name]
		p := filepath.Join(dir, name)
		var err error
		if content == nil {
			err = os.Mkdir(p, 0o755)
		} else {
			err = os.WriteFile(p, []byte(*content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func str(s string) *string { return &s }

const tinyTable = "inferno-markov 1\n# two words\nalpha: beta $\nbeta: alpha beta\n"

func TestLoadModelRefuses(t *testing.T) {
	marker := str("done\n")
	cases := map[string]struct {
		files   map[string]*string // nil: the directory does not exist
		missing bool
		want    string // a substring of the reason
	}{
		"missing directory": {missing: true, want: "does not exist"},
		"empty directory":   {files: map[string]*string{}, want: "is empty"},
		"no marker": {
			files: map[string]*string{"model.markov": str(tinyTable)},
			want:  "has no .inferno-complete marker",
		},
		"no weights file": {
			files: map[string]*string{MarkerFile: marker, "README.md": str("hi"), "nested.markov": nil},
			want:  "has no *.markov weights file",
		},
		"weights only in a subdirectory": {
			files: map[string]*string{MarkerFile: marker, "sub": nil, "sub/model.markov": str(tinyTable)},
			want:  "has no *.markov weights file",
		},
		"empty weights file": {
			files: map[string]*string{MarkerFile: marker, "model.markov": str("")},
			want:  "weights file model.markov: empty file",
		},
		"no magic": {
			files: map[string]*string{MarkerFile: marker, "model.markov": str("alpha: beta\n")},
			want:  "weights file model.markov: line 1: not an inferno-markov file",
		},
		"newer format": {
			files: map[string]*string{MarkerFile: marker, "model.markov": str("inferno-markov 2\nalpha: $\n")},
			want:  `line 1: format version "2" is not supported`,
		},
		"row without colon": {
			files: map[string]*string{MarkerFile: marker, "model.markov": str("inferno-markov 1\nalpha beta\n")},
			want:  "line 2: want \"word: successor ...\"",
		},
		"row without successors": {
			files: map[string]*string{MarkerFile: marker, "model.markov": str("inferno-markov 1\n\nalpha:\n")},
			want:  `line 3: "alpha" has no successors`,
		},
		"end token as a word": {
			files: map[string]*string{MarkerFile: marker, "model.markov": str("inferno-markov 1\n$: alpha\n")},
			want:  `line 2: "$" is not a word`,
		},
		"second row for a word": {
			files: map[string]*string{MarkerFile: marker, "model.markov": str("inferno-markov 1\nalpha: $\nalpha: alpha\n")},
			want:  `line 3: a second row for "alpha"`,
		},
		"no rows": {
			files: map[string]*string{MarkerFile: marker, "model.markov": str("inferno-markov 1\n# nothing\n")},
			want:  "weights file model.markov: no rows",
		},
		"dangling successor": {
			files: map[string]*string{MarkerFile: marker, "model.markov": str("inferno-markov 1\nalpha: gamma $\n")},
			want:  `model.markov:2: successor "gamma" has no row`,
		},
		"binary file": {
			files: map[string]*string{MarkerFile: marker, "model.markov": str("inferno-markov 1\n\xff\xfe\n")},
			want:  "not UTF-8 text",
		},
		"second file corrupt": {
			files: map[string]*string{MarkerFile: marker, "a.markov": str(tinyTable), "b.markov": str("garbage")},
			want:  "weights file b.markov: line 1",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "absent")
			if !tc.missing {
				dir = writeDir(t, tc.files)
			}
			m, err := LoadModel(dir)
			if err == nil {
				t.Fatalf("LoadModel: got a model with %d words, want a refusal containing %q", m.Words(), tc.want)
			}
			if _, ok := err.(*LoadError); !ok {
				t.Errorf("LoadModel: error is a %T, want a *LoadError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadModel: reason %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestLoadModelMergesFilesInNameOrder(t *testing.T) {
	b := "inferno-markov 1\nalpha: gamma\ngamma: $\n"
	a := "inferno-markov 1\nalpha: beta\nbeta: alpha\n"
	dir := writeDir(t, map[string]*string{MarkerFile: str("x"), "b.markov": &b, "a.markov": &a, "notes.txt": str("ignored")})
	m, err := LoadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.markov", "b.markov"}, m.Files); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
	// A successor named in one file may have its row in another, and rows
	// of the same word add up in file order.
	wantNext := map[string][]string{"alpha": {"beta", "gamma"}, "beta": {"alpha"}, "gamma": {"$"}}
	if diff := cmp.Diff(wantNext, m.next); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}

	h := sha256.New()
	for _, f := range []struct{ name, body string }{{"a.markov", a}, {"b.markov", b}} {
		h.Write([]byte(f.name + "\x00"))
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(f.body))))
		h.Write([]byte(f.body))
	}
	if want := "sha256:" + hex.EncodeToString(h.Sum(nil)); m.Digest != want {
		t.Errorf("Digest = %s, want %s", m.Digest, want)
	}

	// The names are part of the digest: the same bytes under other names
	// are other weights.
	renamed := writeDir(t, map[string]*string{MarkerFile: str("x"), "c.markov": &b, "a.markov": &a})
	m2, err := LoadModel(renamed)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Digest == m.Digest {
		t.Errorf("renaming a weights file kept the digest %s", m.Digest)
	}
}

func TestSampleWeights(t *testing.T) {
	demo := SampleWeights("demo", 64)
	if got := SampleWeights("demo", 64); string(got) != string(demo) {
		t.Error("SampleWeights is not deterministic")
	}
	if len(demo) > 4096 {
		t.Errorf("the 64-word sample is %d bytes, want at most 4 KiB", len(demo))
	}
	vocab := func(b []byte) map[string]bool {
		tab := newTable()
		if err := tab.parse("model.markov", b); err != nil {
			t.Fatalf("the sample does not parse: %v", err)
		}
		m, err := tab.model()
		if err != nil {
			t.Fatalf("the sample does not load: %v", err)
		}
		words := map[string]bool{}
		for _, w := range m.words {
			words[w] = true
		}
		return words
	}
	a, b := vocab(demo), vocab(SampleWeights("v2", 64))
	if len(a) != 64 || len(b) != 64 {
		t.Fatalf("vocabularies of %d and %d words, want 64", len(a), len(b))
	}
	shared := 0
	for w := range a {
		if b[w] {
			shared++
		}
	}
	// Two seeds may share a word by chance; most must differ, or two
	// versions would not be told apart.
	if shared > 8 {
		t.Errorf("seeds demo and v2 share %d of 64 words", shared)
	}
}

// loadSample writes the sample of seed into a directory and loads it.
func loadSample(t *testing.T, seed string) (*Model, string) {
	t.Helper()
	dir := t.TempDir()
	if err := (&WeightsCmd{Out: dir, Seed: seed, Words: 64, Name: "model.markov", Marker: true}).Run(); err != nil {
		t.Fatal(err)
	}
	m, err := LoadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m, dir
}

func TestGenerateIsDeterministic(t *testing.T) {
	demo, _ := loadSample(t, "demo")
	v2, _ := loadSample(t, "v2")

	// The same weights give the same answer, in this process and (pinned
	// here) in every other: a change to these strings changes what every
	// deployed fake server answers.
	const prompt = "hello world"
	got := demo.Generate(prompt, 8)
	want := Completion{
		Tokens:       []string{"ponifu", "vogimo", "muvo", "zinitu", "futona", "tefole", "lofuta", "zikigu"},
		PromptTokens: 2, Finish: "length",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Generate(%q, 8) (-want +got):\n%s", prompt, diff)
	}
	if want := "sha256:efb6879fa420785c09461e51e3fa19fe239aa0e707a0255749bf291f71d9f0da"; demo.Digest != want {
		t.Errorf("digest of the demo sample = %s, want %s", demo.Digest, want)
	}
	for range 3 {
		if diff := cmp.Diff(got, demo.Generate(prompt, 8)); diff != "" {
			t.Fatalf("a second Generate differs (-first +second):\n%s", diff)
		}
	}
	if a, b := demo.Generate(prompt, 16).Text(), v2.Generate(prompt, 16).Text(); a == b {
		t.Errorf("seeds demo and v2 both answer %q", a)
	}
	if a, b := demo.Generate("hello world", 16).Text(), demo.Generate("goodbye world", 16).Text(); a == b {
		t.Errorf("two prompts both answer %q", a)
	}
	// A longer answer starts with the shorter one: max_tokens cuts, it
	// does not change the walk.
	if long := demo.Generate(prompt, 16).Text(); !strings.HasPrefix(long, got.Text()) {
		t.Errorf("16 tokens %q do not start with 8 tokens %q", long, got.Text())
	}
}

func TestGenerateFinishReasons(t *testing.T) {
	tab := newTable()
	if err := tab.parse("t.markov", []byte("inferno-markov 1\nend: $\nloop: loop\n")); err != nil {
		t.Fatal(err)
	}
	m, err := tab.model()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		prompt string
		max    int
		want   Completion
	}{
		// The prompt's last word is known and can only end the text.
		"stop at once": {prompt: "the end", max: 5, want: Completion{Tokens: []string{}, PromptTokens: 2, Finish: "stop"}},
		"length":       {prompt: "loop", max: 3, want: Completion{Tokens: []string{"loop", "loop", "loop"}, PromptTokens: 1, Finish: "length"}},
		"empty prompt": {prompt: "", max: 1, want: Completion{Tokens: []string{"end"}, PromptTokens: 0, Finish: "length"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, m.Generate(tc.prompt, tc.max)); diff != "" {
				t.Errorf("Generate(%q, %d) (-want +got):\n%s", tc.prompt, tc.max, diff)
			}
		})
	}
}
