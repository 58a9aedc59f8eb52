# Sourced by scripts/serve and scripts/test: make sure .venv exists and holds this
# project (editable) with its test extras, reinstalling only when setup.cfg or
# pyproject.toml changed since the last install. Leaves the venv activated.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
py="${PYTHON:-}"
if [ -z "$py" ]; then
  for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      py="$candidate"; break
    fi
  done
fi
if [ -z "$py" ]; then
  echo "bootstrap: Python 3.11 or newer is required (set PYTHON=/path/to/python3.11)" >&2
  exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
  echo "bootstrap: creating $venv with $py" >&2
  "$py" -m venv "$venv"
fi
stamp="$venv/.installed"
want="$(cat "$root/setup.cfg" "$root/pyproject.toml" | "$venv/bin/python" -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "bootstrap: installing the project and its test tools into $venv" >&2
  "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
  "$venv/bin/python" -m pip install --quiet -e "$root[test]" >&2
  echo "$want" > "$stamp"
fi
# shellcheck disable=SC1091
source "$venv/bin/activate"
cd "$root"
