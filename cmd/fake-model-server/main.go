// Command fake-model-server is the image of the `fake` runtime preset: an
// OpenAI-shaped model server that answers from a small word-level Markov
// table instead of a neural network. It behaves like a real server where a
// platform cares — it refuses incomplete weights, is unready until loaded,
// drains on SIGTERM, exports a concurrency gauge — and its answers are a
// pure function of weights and prompt, so tests can predict them.
//
// It links no Kubernetes packages: it is a pod's workload, not a client.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
)

// retryEvery is how often an unready server looks at its weights again.
const retryEvery = 2 * time.Second

// CLI is the command line. Serving is the default command because the
// `fake` preset passes flags only.
type CLI struct {
	Serve    ServeCmd    `cmd:"" default:"withargs" help:"Serve the model in --model-dir (the default command)."`
	Weights  WeightsCmd  `cmd:"" help:"Write a sample weights file derived from a seed."`
	Generate GenerateCmd `cmd:"" help:"Print the completion the server would answer for a prompt."`
}

// ServeCmd serves the API. Every flag also reads the environment variable
// the Deployment sets, or a FAKE_* one a claim's serve.env can set.
type ServeCmd struct {
	ModelDir        string        `required:"" env:"MODEL_DIR" help:"Directory of the weights (*.markov files and the .inferno-complete marker)."`
	Port            int           `env:"PORT" default:"8080" help:"Port to listen on, on all addresses."`
	ModelName       string        `env:"MODEL_NAME" default:"fake" help:"The model name requests must ask for."`
	ModelVersion    string        `env:"MODEL_VERSION" default:"" help:"The version reported in responses and metrics."`
	LoadDelay       time.Duration `env:"FAKE_LOAD_DELAY" default:"0s" help:"Wait this long before loading the weights (exercises start-up probes)."`
	TokenDelay      time.Duration `env:"FAKE_TOKEN_DELAY" default:"0s" help:"Time to generate each token (makes concurrency measurable)."`
	DrainDelay      time.Duration `env:"FAKE_DRAIN_DELAY" default:"0s" help:"After SIGTERM, keep answering this long with /healthz failing, then stop accepting."`
	ShutdownTimeout time.Duration `env:"FAKE_SHUTDOWN_TIMEOUT" default:"30s" help:"After draining, how long in-flight requests may take to finish."`
	LogRequests     bool          `env:"FAKE_LOG_REQUESTS" help:"Log one line per request."`
	Adapters        []string      `name:"adapter" sep:"none" placeholder:"NAME=DIR" help:"A LoRA adapter: requests for model NAME are answered from the weights in DIR (repeatable)."`
}

// Run serves until SIGTERM or SIGINT, then drains and shuts down.
func (c *ServeCmd) Run() error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if c.ModelDir == "" {
		return errors.New("--model-dir (MODEL_DIR) must not be empty")
	}
	if c.Port < 1 || c.Port > 65535 {
		return fmt.Errorf("--port must be between 1 and 65535, not %d", c.Port)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	// After the first signal a second one kills the process at once, as
	// an operator pressing ^C twice expects.
	context.AfterFunc(ctx, stop)
	defer stop()
	cfg, err := c.config()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(c.Port)))
	if err != nil {
		return err
	}
	return c.serve(ctx, ln, cfg, log)
}

// config is the server's Config the flags give.
func (c *ServeCmd) config() (Config, error) {
	adapters, err := parseAdapters(c.Adapters, c.ModelName)
	if err != nil {
		return Config{}, err
	}
	return Config{
		ModelName: c.ModelName, ModelVersion: c.ModelVersion,
		TokenDelay: c.TokenDelay, LogRequests: c.LogRequests,
		Adapters: adapters,
	}, nil
}

// serve answers on ln with a server of cfg until ctx ends, then drains:
// /healthz fails at once, requests are answered for DrainDelay, then the
// listener closes and in-flight requests get ShutdownTimeout to finish.
func (c *ServeCmd) serve(ctx context.Context, ln net.Listener, cfg Config, log *slog.Logger) error {
	s := NewServer(cfg, log)
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	loadCtx, stopLoading := context.WithCancel(context.Background())
	defer stopLoading()
	go s.LoadWeights(loadCtx, c.ModelDir, c.LoadDelay, retryEvery)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("listening", "address", ln.Addr().String(), "model", c.ModelName, "version", c.ModelVersion,
		"uid", os.Getuid(), "gid", os.Getgid())

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	s.Drain()
	// Connection: close from now on, so that clients with a kept-alive
	// connection reconnect, through the Service, to a pod that stays.
	srv.SetKeepAlivesEnabled(false)
	log.Info("draining", "for", c.DrainDelay)
	select {
	case err := <-served:
		return err
	case <-time.After(c.DrainDelay):
	}

	log.Info("shutting down", "timeout", c.ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
		return fmt.Errorf("in-flight requests did not finish within --shutdown-timeout=%s; closed them", c.ShutdownTimeout)
	}
	log.Info("stopped")
	return nil
}

// parseAdapters reads --adapter NAME=DIR flags: each name once, and not
// the base model's.
func parseAdapters(flags []string, base string) (map[string]string, error) {
	out := make(map[string]string, len(flags))
	for _, f := range flags {
		name, dir, ok := strings.Cut(f, "=")
		switch {
		case !ok || name == "" || dir == "":
			return nil, fmt.Errorf("--adapter %q: write NAME=DIR", f)
		case name == base:
			return nil, fmt.Errorf("--adapter %q: %s is the base model's name", f, name)
		case out[name] != "":
			return nil, fmt.Errorf("--adapter %q: adapter %s is given twice", f, name)
		}
		out[name] = dir
	}
	return out, nil
}

// WeightsCmd writes a sample weights directory, as a puller would.
type WeightsCmd struct {
	Out    string `required:"" help:"Directory to write into (created)."`
	Seed   string `required:"" help:"Text the vocabulary and the table derive from; another seed, another model."`
	Words  int    `default:"64" help:"Size of the vocabulary (2 to 4096)."`
	Name   string `default:"model.markov" help:"Name of the weights file."`
	Marker bool   `help:"Also write the completion marker, as a finished pull does."`
}

// Run writes the weights file, then the marker: the marker last, as a
// puller does, so that a server never sees a marker without weights.
func (c *WeightsCmd) Run() error {
	if c.Words < 2 || c.Words > 4096 {
		return fmt.Errorf("--words must be between 2 and 4096, not %d", c.Words)
	}
	if c.Name == "" || filepath.Base(c.Name) != c.Name || c.Name == MarkerFile {
		return fmt.Errorf("--name must be a file name, not %q", c.Name)
	}
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.Out, c.Name), SampleWeights(c.Seed, c.Words), 0o644); err != nil {
		return err
	}
	if !c.Marker {
		return nil
	}
	return os.WriteFile(filepath.Join(c.Out, MarkerFile), fmt.Appendf(nil, "fake-model-server weights --seed=%q\n", c.Seed), 0o644)
}

// GenerateCmd is the oracle of the server's answers: it loads the weights
// the same way and prints the text the server would return.
type GenerateCmd struct {
	ModelDir  string `required:"" env:"MODEL_DIR" help:"Directory of the weights."`
	Prompt    string `help:"The prompt of /v1/completions."`
	MaxTokens int    `default:"16" help:"max_tokens of the request (1 to 4096)."`
	Chat      bool   `help:"Answer as /v1/chat/completions does for one user message whose content is --prompt."`
}

// Run prints the completion text with no trailing newline, so that the
// output compares equal to the text of a response.
func (c *GenerateCmd) Run(stdout io.Writer) error {
	n, err := checkMaxTokens(&c.MaxTokens)
	if err != nil {
		return err
	}
	m, err := LoadModel(c.ModelDir)
	if err != nil {
		return err
	}
	prompt := c.Prompt
	if c.Chat {
		prompt = chatUserPrompt(c.Prompt)
	}
	_, err = io.WriteString(stdout, m.Generate(prompt, n).Text())
	return err
}

// chatUserPrompt is ChatPrompt of a single user message.
func chatUserPrompt(content string) string {
	raw, _ := json.Marshal(content) // a string always marshals
	p, _ := ChatPrompt([]ChatMessage{{Role: "user", Content: raw}})
	return p
}

func newParser(cli *CLI, options ...kong.Option) (*kong.Kong, error) {
	return kong.New(cli, append([]kong.Option{
		kong.Name("fake-model-server"),
		kong.Description("An OpenAI-shaped model server that answers from a word-level Markov table: the image of Inferno's `fake` runtime preset."),
		kong.UsageOnError(),
		kong.BindTo(io.Writer(os.Stdout), (*io.Writer)(nil)),
	}, options...)...)
}

func main() {
	var cli CLI
	parser, err := newParser(&cli)
	if err != nil {
		panic(err)
	}
	ctx, err := parser.Parse(os.Args[1:])
	parser.FatalIfErrorf(err)
	parser.FatalIfErrorf(ctx.Run())
}
