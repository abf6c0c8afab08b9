# shellcheck shell=sh
set -eu
if [ -f "$TARGET_DIR/.inferno-complete" ]; then echo "weights for $MODEL_URI already in $TARGET_DIR"; exit 0; fi
mkdir -p "$TARGET_DIR"
stall="${PULL_STALL_SECONDS:-300}"
watch() {
  "$@" &
  pid=$!
  last=-1
  still=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 2
    size=$(du -sk "$TARGET_DIR" 2>/dev/null | cut -f1)
    if [ "$size" != "$last" ]; then last=$size; still=0; else still=$((still + 2)); fi
    if [ "$still" -ge "$stall" ]; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      echo "stalled: $TARGET_DIR did not grow for ${stall}s; stopped the download of $MODEL_URI" >&2
      exit 75
    fi
  done
  wait "$pid"
}
# shellcheck disable=SC2034 # cr is for http.sh's progress_total: the progress functions are the same in every script
cr=$(printf '\r')
progress_pid=""
progress_report() {
  bytes=$(progress_bytes); total=$(progress_total); now=$(date +%s)
  case "$bytes" in ''|*[!0-9]*) bytes=0 ;; esac
  case "$total" in *[!0-9]*) total="" ;; esac
  rate=0
  if [ "$now" -gt "$last_t" ] && [ "$bytes" -ge "$last_b" ]; then rate=$(( (bytes - last_b) / (now - last_t) )); fi
  last_b=$bytes; last_t=$now
  host="$KUBERNETES_SERVICE_HOST"; case "$host" in *:*) host="[$host]" ;; esac
  body=$(printf '{"data":{"bytes":"%s","total":"%s","rate":"%s","startedAt":"%s","updatedAt":"%s"}}' "$bytes" "$total" "$rate" "$started" "$(date -u +%Y-%m-%dT%H:%M:%SZ)")
  if ! err=$(printf 'header = "Authorization: Bearer %s"\n' "$(cat "$sa/token")" | curl --fail --silent --show-error --max-time 10 -K - \
      --cacert "$sa/ca.crt" -H 'Content-Type: application/merge-patch+json' -X PATCH --data "$body" -o /dev/null \
      "https://$host:$KUBERNETES_SERVICE_PORT$PROGRESS_PATH" 2>&1); then
    [ -n "$warned" ] || echo "progress: cannot report to $PROGRESS_PATH ($err); the download goes on" >&2
    warned=1
  fi
}
progress_start() {
  [ -n "${PROGRESS_PATH:-}" ] || return 0
  if ! command -v curl >/dev/null 2>&1; then echo "progress: no curl in the image; not reporting" >&2; return 0; fi
  sa=/var/run/secrets/kubernetes.io/serviceaccount; every="${PROGRESS_INTERVAL_SECONDS:-5}"; warned=""
  started=$(date -u +%Y-%m-%dT%H:%M:%SZ); last_t=$(date +%s); last_b=0
  ( set +e; while :; do sleep "$every"; progress_report; done ) &
  progress_pid=$!
}
progress_stop() {
  [ -n "$progress_pid" ] || return 0
  kill "$progress_pid" 2>/dev/null || true
  wait "$progress_pid" 2>/dev/null || true
  progress_pid=""
  set +e; progress_report; set -e
}
progress_bytes() { echo $(( $(du -sk "$TARGET_DIR" 2>/dev/null | cut -f1) * 1024 )); }
progress_total() { echo ""; }
export AWS_RETRY_MODE="${AWS_RETRY_MODE:-standard}" AWS_MAX_ATTEMPTS="${AWS_MAX_ATTEMPTS:-10}"
progress_start
watch aws s3 sync --only-show-errors --cli-connect-timeout 30 --cli-read-timeout 60 "s3://$MODEL_SOURCE" "$TARGET_DIR"
progress_stop
printf '%s\n' "$MODEL_URI" > "$TARGET_DIR/.inferno-complete"
echo "pulled $MODEL_URI into $TARGET_DIR"
