// Command tiny-gguf writes the e2e's tiny llama model (gguf.TinyLlama), the
// same file scenario 32 serves, to try llama-server by hand:
//
//	go run ./cmd/tiny-gguf -out /tmp/tiny.gguf
//	bin/llama/llama-server -m /tmp/tiny.gguf -t 1 -tb 1
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/inferno-ai/function-inferno/test/e2e/gguf"
)

func main() {
	out := flag.String("out", "tiny-llama.gguf", "Where to write the model.")
	seed := flag.Uint64("seed", 1, "The weights' seed.")
	flag.Parse()
	f, err := os.Create(*out)
	if err == nil {
		err = gguf.Write(f, gguf.TinyLlama(*seed))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
