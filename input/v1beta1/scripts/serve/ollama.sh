# shellcheck shell=sh
# The ollama preset's start script: serve the version's weights with
# `ollama serve` without ever writing to them, and without copying them.
# `ollama serve` wants its store (OLLAMA_MODELS: blobs/ and manifests/)
# writable, and serves only models in it, by their manifest's name.
set -eu
# Pruning deletes blobs no manifest names, and an empty directory under
# manifests/ makes serve exit on a read-only store: never prune.
export OLLAMA_NOPRUNE=1
if [ -d "$MODEL_DIR/manifests" ] && [ -d "$MODEL_DIR/blobs" ]; then
  # The weights are an Ollama store already: serve it where it is. Its
  # models keep their own names and parameters.
  export OLLAMA_MODELS="$MODEL_DIR"
else
  # The first model GGUF, as the llamacpp preset picks it: not a
  # multimodal projector, not a LoRA adapter; a split model's first part.
  m="$(find "$MODEL_DIR" -name '*.gguf' ! -iname '*mmproj*' ! -iname '*lora*' | sort | head -n 1)"
  [ -n "$m" ] || { echo "no Ollama store (blobs/ and manifests/) and no model GGUF under $MODEL_DIR" >&2; exit 1; }
  store="$HOME/ollama"
  export OLLAMA_MODELS="$store/models"
  # A restarted container finds its emptyDir as it left it: the last
  # store, read-only. Start again from nothing.
  if [ -d "$store" ]; then
    find "$store" ! -type l -exec chmod u+w {} +
    rm -rf "$store"
  fi
  mkdir -p "$OLLAMA_MODELS/blobs"
  # `ollama create` uploads (copies) the GGUF into the store unless a blob
  # of its digest is there already; a symlink to the read-only file is.
  # Both read the whole file once for its digest.
  d="$(sha256sum "$m" | cut -d ' ' -f 1)"
  ln -s "$m" "$OLLAMA_MODELS/blobs/sha256-$d"
  # Ollama runs one thread per physical core of the node, not of its CPU
  # share: NUM_THREAD (the CPU request, rounded up) becomes the model's
  # num_thread. The chat template comes from the GGUF.
  {
    printf 'FROM %s\n' "$m"
    [ -z "${NUM_THREAD:-}" ] || printf 'PARAMETER num_thread %s\n' "$NUM_THREAD"
  } > "$store/Modelfile"
  # Name it MODEL_NAME through a server on loopback that nothing else can
  # reach, on a port other than the one probed: the pod turns ready only
  # once the model exists.
  setup=127.0.0.1:$((PORT + 1))
  OLLAMA_HOST=$setup ollama serve > "$store/setup.log" 2>&1 &
  pid=$!
  i=0
  until OLLAMA_HOST=$setup ollama list > /dev/null 2>&1; do
    i=$((i + 1))
    if [ "$i" -ge 600 ] || ! kill -0 "$pid" 2> /dev/null; then
      echo "the setup server did not start:" >&2
      cat "$store/setup.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  if ! OLLAMA_HOST=$setup ollama create "$MODEL_NAME" -f "$store/Modelfile" > "$store/create.log" 2>&1; then
    echo "ollama create $MODEL_NAME failed:" >&2
    cat "$store/create.log" "$store/setup.log" >&2
    kill "$pid"
    exit 1
  fi
  kill "$pid"
  wait "$pid" || true
  # Read-only from here: the API's create, copy, delete, pull and blob
  # upload cannot write to the store (the container runs without
  # CAP_DAC_OVERRIDE). The symlinks' targets are on the read-only volume.
  find "$store" ! -type l -exec chmod a-w {} +
fi
export OLLAMA_HOST="0.0.0.0:$PORT"
exec ollama serve "$@"
