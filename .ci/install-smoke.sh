#!/usr/bin/env bash
# The pip route: build a wheel from the checkout's files, install it into a throwaway venv, and check that the
# installed `gemmlens` works from another directory with the bundled data (CLI, GPU worker child, dashboard).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
app_pid=
cleanup() {
    if [ -n "$app_pid" ]; then kill "$app_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Build from a copy of the files git would carry, so no stale build/ folder in the checkout leaks into the wheel.
mkdir "$work/src"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
    tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$work/src"
python3 -m venv "$work/venv"
py="$work/venv/bin/python"
"$py" -m pip wheel -q --no-deps -w "$work/wheel" "$work/src"
"$py" -m pip install -q "$work"/wheel/*.whl
gemmlens="$work/venv/bin/gemmlens"

cd "$work"  # nowhere near the checkout
set -x
# Outputs are captured before grep reads them: `grep -q` closing a pipe early would fail the writer.
out=$("$gemmlens" --help)
grep -q "start the Streamlit dashboard" <<<"$out"
out=$("$gemmlens" occupancy --cc 9.0 --threads 256 --registers 64 --shared-mem 16384)
grep -q "occupancy *50.0 %" <<<"$out"
site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
bundled=$("$py" -c 'from profiling.paths import BUNDLED_RESULTS_DIR; print(BUNDLED_RESULTS_DIR)')
case "$bundled" in "$site"/*) ;; *) echo "bundled results found outside the install: $bundled" >&2; exit 1 ;; esac
csv=$(find "$bundled" -name '*_raw.csv' | sort | head -n 1)
out=$("$gemmlens" report "$csv")
grep -q "launch(es), raw layout" <<<"$out"
"$py" -c 'from kernels.catalog import CATALOG
missing = [s.source for s in CATALOG if s.source_path and not s.source_path.is_file()]
assert not missing, f"kernel sources not installed: {missing}"'
# The GPU worker child starts from the installed copy: it runs the job, or says in one line that there is no GPU.
if ! "$gemmlens" bench --kernels v1 --sizes 256 >"$work/bench.out" 2>&1; then
    grep -qE "no usable CUDA GPU|no NVIDIA GPU or driver was found" "$work/bench.out" || { cat "$work/bench.out" >&2; exit 1; }
fi

port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$gemmlens" app --server.port "$port" --server.address 127.0.0.1 >"$work/app.log" 2>&1 &
app_pid=$!
healthy=
for _ in $(seq 90); do
    if curl -sf "http://127.0.0.1:$port/_stcore/health" >/dev/null; then healthy=1; break; fi
    sleep 1
done
[ -n "$healthy" ] || { cat "$work/app.log" >&2; exit 1; }
page=$(curl -sf "http://127.0.0.1:$port/")
grep -qi "<title>streamlit</title>" <<<"$page"
kill "$app_pid"
wait "$app_pid" || true
app_pid=
# The Overview script itself, run headless from the install: it finds the bundled measurements.
GEMMLENS_GPU=off "$py" - <<'EOF'
from streamlit.testing.v1 import AppTest

from profiling.app.bundles import discover_bundles
from profiling.paths import APP_SCRIPT

at = AppTest.from_file(str(APP_SCRIPT), default_timeout=120).run()
assert not at.exception, [e.value for e in at.exception]
shown = " ".join(str(e.value) for e in [*at.warning, *at.info, *at.success, *at.caption, *at.markdown])
newest = discover_bundles()[0]  # the default bundle: the newest measurements installed with the package
expected = f"showing bundled measurements from {newest.device_name} on {newest.date}"
assert expected in shown.replace("\\", ""), f"{expected!r} is not shown: {shown[:500]}"
EOF
set +x
echo "install smoke test passed"
