package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MarkerFile is the name a puller writes into the weights directory once
// the download is complete. It duplicates v1beta1.MarkerFile (a test keeps
// them equal) so that this binary does not link the Kubernetes API packages.
const MarkerFile = ".inferno-complete"

// WeightsExt is the suffix of a weights file; the loader reads the
// top-level files that carry it and ignores everything else, as a real
// server ignores a README beside its safetensors.
const WeightsExt = ".markov"

// The first line of every weights file. The version is a number so that a
// server can tell "a newer format" from "not a weights file at all".
const (
	formatMagic   = "inferno-markov"
	formatVersion = 1
)

// EndToken as a successor ends the generation with finish_reason "stop".
const EndToken = "$"

// Model is a word-level Markov table: each word lists the words that may
// follow it. It is what the server answers from, and all it answers from,
// so that two pods with the same weights give the same answers.
type Model struct {
	// Digest is "sha256:<hex>" over the weights files' names and bytes; the
	// server reports it so that a client can tell which weights answered.
	Digest string
	// Files are the weights files read, in the order they were merged.
	Files []string

	next  map[string][]string
	words []string // every word with a row, sorted: the successors of a prompt that ends elsewhere
}

// Words is the size of the vocabulary.
func (m *Model) Words() int { return len(m.words) }

// LoadError is why a weights directory cannot be served. The server shows
// its message as the reason it is not ready.
type LoadError struct{ Reason string }

// Error is the reason alone: it is shown to operators as is.
func (e *LoadError) Error() string { return e.Reason }

func refuse(format string, args ...any) error {
	return &LoadError{Reason: fmt.Sprintf(format, args...)}
}

// LoadModel reads the weights in dir. It refuses a directory a puller has
// not finished (no marker) rather than serving half a model, and it reads
// every top-level weights file in name order, so the same directory always
// yields the same model and digest.
func LoadModel(dir string) (*Model, error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, refuse("model directory %s does not exist", dir)
	case err != nil:
		return nil, refuse("model directory %s cannot be read: %v", dir, err)
	case len(entries) == 0:
		return nil, refuse("model directory %s is empty", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, MarkerFile)); err != nil {
		return nil, refuse("model directory %s has no %s marker: the weights are not completely written", dir, MarkerFile)
	}
	var names []string
	for _, e := range entries { // os.ReadDir sorts by name
		if !strings.HasSuffix(e.Name(), WeightsExt) {
			continue
		}
		// Stat, not the entry's type: Kubernetes volumes (ConfigMaps,
		// projected volumes) present files as symlinks.
		if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && fi.Mode().IsRegular() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil, refuse("model directory %s has no *%s weights file", dir, WeightsExt)
	}

	digest := sha256.New()
	t := newTable()
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, refuse("weights file %s cannot be read: %v", name, err)
		}
		// Name, length and bytes of each file, so that no two different
		// directories can hash the same.
		digest.Write([]byte(name))
		digest.Write([]byte{0})
		digest.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
		digest.Write(b)
		if err := t.parse(name, b); err != nil {
			return nil, refuse("weights file %s: %v", name, err)
		}
	}
	m, err := t.model()
	if err != nil {
		return nil, refuse("weights: %v", err)
	}
	m.Digest = "sha256:" + hex.EncodeToString(digest.Sum(nil))
	m.Files = names
	return m, nil
}

// table accumulates rows across files; successors of a word that appears
// in several files are concatenated in file order.
type table struct {
	next map[string][]string
	// where each successor was first named, to report a dangling one.
	mentioned map[string]string
}

func newTable() *table {
	return &table{next: map[string][]string{}, mentioned: map[string]string{}}
}

// parse reads one weights file:
//
//	inferno-markov 1
//	# comments and blank lines are ignored
//	word: successor successor ...
//
// A successor is a word with its own row (in any file) or "$", the end of
// the text. Words are any non-space text without ':' other than "$".
func (t *table) parse(name string, b []byte) error {
	if !utf8.Valid(b) {
		return errors.New("not UTF-8 text")
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	if !sc.Scan() {
		return fmt.Errorf("empty file: want a first line %q", fmt.Sprintf("%s %d", formatMagic, formatVersion))
	}
	header := strings.Fields(sc.Text())
	if len(header) != 2 || header[0] != formatMagic {
		return fmt.Errorf("line 1: not an %s file (want %q)", formatMagic, fmt.Sprintf("%s %d", formatMagic, formatVersion))
	}
	if header[1] != fmt.Sprint(formatVersion) {
		return fmt.Errorf("line 1: format version %q is not supported (this server reads %d)", header[1], formatVersion)
	}
	seen := map[string]bool{}
	rows := 0
	for n := 2; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		word, rest, ok := strings.Cut(line, ":")
		word = strings.TrimSpace(word)
		if !ok {
			return fmt.Errorf("line %d: want \"word: successor ...\"", n)
		}
		if !validWord(word) {
			return fmt.Errorf("line %d: %q is not a word (no spaces, no ':', not %q)", n, word, EndToken)
		}
		if seen[word] {
			return fmt.Errorf("line %d: a second row for %q", n, word)
		}
		seen[word] = true
		succ := strings.Fields(rest)
		if len(succ) == 0 {
			return fmt.Errorf("line %d: %q has no successors", n, word)
		}
		for _, s := range succ {
			if s != EndToken && !validWord(s) {
				return fmt.Errorf("line %d: successor %q is not a word", n, s)
			}
			if _, ok := t.mentioned[s]; !ok {
				t.mentioned[s] = fmt.Sprintf("%s:%d", name, n)
			}
		}
		t.next[word] = append(t.next[word], succ...)
		rows++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if rows == 0 {
		return errors.New("no rows")
	}
	return nil
}

// model checks that every successor can be continued from, so that
// generation never reaches a word it does not know.
func (t *table) model() (*Model, error) {
	words := make([]string, 0, len(t.next))
	for w := range t.next {
		words = append(words, w)
	}
	slices.Sort(words)
	var dangling []string
	for s, where := range t.mentioned {
		if _, ok := t.next[s]; !ok && s != EndToken {
			dangling = append(dangling, fmt.Sprintf("%s: successor %q has no row", where, s))
		}
	}
	if len(dangling) > 0 {
		slices.Sort(dangling)
		return nil, errors.New(strings.Join(dangling, "; "))
	}
	return &Model{next: t.next, words: words}, nil
}

func validWord(w string) bool {
	return w != "" && w != EndToken && !strings.ContainsFunc(w, func(r rune) bool {
		return r == ':' || unicode.IsSpace(r) || unicode.IsControl(r)
	})
}

// Completion is what the model generates for one prompt.
type Completion struct {
	Tokens       []string
	PromptTokens int
	// Finish is "stop" when the table ended the text, "length" when
	// max_tokens did.
	Finish string
}

// Text is the completion as the API returns it: tokens joined by spaces.
func (c Completion) Text() string { return strings.Join(c.Tokens, " ") }

// Generate walks the table from the prompt's last word (or, when the table
// does not know it, from any word). Each step's choice is a hash of the
// prompt, the step and the current word: no randomness and no clock, so a
// prompt has one answer per model, on every pod, in every run.
func (m *Model) Generate(prompt string, maxTokens int) Completion {
	fields := strings.Fields(prompt)
	c := Completion{PromptTokens: len(fields), Finish: "length", Tokens: []string{}}
	seed := sha256.Sum256([]byte(prompt))

	choices := m.words
	current := ""
	if len(fields) > 0 {
		if next, ok := m.next[fields[len(fields)-1]]; ok {
			current, choices = fields[len(fields)-1], next
		}
	}
	for step := 0; len(c.Tokens) < maxTokens; step++ {
		h := fnv.New64a()
		h.Write(seed[:])
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(step)))
		h.Write([]byte(current))
		w := choices[h.Sum64()%uint64(len(choices))]
		if w == EndToken {
			c.Finish = "stop"
			break
		}
		c.Tokens = append(c.Tokens, w)
		current, choices = w, m.next[w]
	}
	return c
}

// SampleWeights returns a weights file whose vocabulary and rows all derive
// from seed. Words are made of syllables drawn from a hash stream of the
// seed, so two seeds share almost no words and two model versions built
// from different seeds are told apart by any answer.
func SampleWeights(seed string, words int) []byte {
	r := &hashStream{seed: sha256.Sum256([]byte("inferno-markov sample\x00" + seed))}
	const consonants, vowels = "bdfgklmnprstvz", "aeiou"

	vocab := make([]string, 0, words)
	have := map[string]bool{}
	for len(vocab) < words {
		var w strings.Builder
		for range 2 + r.intn(2) {
			w.WriteByte(consonants[r.intn(len(consonants))])
			w.WriteByte(vowels[r.intn(len(vowels))])
		}
		if !have[w.String()] {
			have[w.String()] = true
			vocab = append(vocab, w.String())
		}
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %d\n# sample weights from seed %q: %d words\n", formatMagic, formatVersion, seed, words)
	for _, w := range vocab {
		n := 2 + r.intn(3)
		succ := make([]string, 0, n+1)
		for range n {
			succ = append(succ, vocab[r.intn(len(vocab))])
		}
		// Some rows may end the text, so that answers end with both
		// finish reasons.
		if r.intn(6) == 0 {
			succ = append(succ, EndToken)
		}
		fmt.Fprintf(&b, "%s: %s\n", w, strings.Join(succ, " "))
	}
	return b.Bytes()
}

// hashStream is a deterministic byte stream: SHA-256 of the seed and a
// counter. math/rand would do, but its sequence is not promised to stay the
// same across Go releases, and sample weights must.
type hashStream struct {
	seed    [32]byte
	counter uint64
	buf     []byte
}

func (r *hashStream) intn(n int) int {
	if len(r.buf) < 8 {
		block := sha256.Sum256(binary.BigEndian.AppendUint64(r.seed[:], r.counter))
		r.counter++
		r.buf = append(r.buf, block[:]...)
	}
	v := binary.BigEndian.Uint64(r.buf)
	r.buf = r.buf[8:]
	return int(v % uint64(n))
}
