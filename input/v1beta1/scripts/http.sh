# shellcheck shell=sh
set -eu
if [ -f "$TARGET_DIR/.inferno-complete" ]; then echo "weights for $MODEL_URI already in $TARGET_DIR"; exit 0; fi
mkdir -p "$TARGET_DIR"
stall="${PULL_STALL_SECONDS:-300}"
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
f="${MODEL_SOURCE##*/}"; f="${f%%\?*}"; [ -n "$f" ] || f=model
headers="${HOME:-/tmp}/.pull-headers"
# shellcheck disable=SC2046 # ls -ln's line is split into its fields on purpose: the fifth is the size
progress_bytes() { set -- $(ls -ln "$TARGET_DIR/.partial" 2>/dev/null); echo "${5:-0}"; }
progress_total() {
  t=""
  [ -f "$headers" ] || { echo ""; return 0; }
  while IFS= read -r line; do
    line="${line%"$cr"}"
    case "$line" in
      HTTP/*) t="" ;;
      [Cc][Oo][Nn][Tt][Ee][Nn][Tt]-[Ll][Ee][Nn][Gg][Tt][Hh]:*) t="${line#*:}"; t="${t# }" ;;
    esac
  done < "$headers"
  echo "$t"
}
progress_start
rc=0
curl --fail --silent --show-error --location --globoff -D "$headers" \
  --proto =http,https --proto-redir =http,https --max-redirs 10 \
  --connect-timeout 30 --speed-limit 1024 --speed-time "$stall" \
  --retry 5 --retry-delay 10 --retry-connrefused \
  ${BEARER_TOKEN:+-H "Authorization: Bearer $BEARER_TOKEN"} \
  -o "$TARGET_DIR/.partial" "$MODEL_URI" || rc=$?
progress_stop
case "$rc" in
  0) ;;
  28) echo "stalled: less than 1 KiB/s for ${stall}s, six times; gave up on $MODEL_URI" >&2; exit 75 ;;
  *) exit "$rc" ;;
esac
mv "$TARGET_DIR/.partial" "$TARGET_DIR/$f"
printf '%s\n' "$MODEL_URI" > "$TARGET_DIR/.inferno-complete"
echo "pulled $MODEL_URI into $TARGET_DIR"
