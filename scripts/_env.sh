# Shared by scripts/reproduce.sh and scripts/test.sh: create .venv and install the package.
# Usage: source scripts/_env.sh EXTRAS   (EXTRAS e.g. "" or "[test]")
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
PYTHON_BIN="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating virtual environment .venv with $($PYTHON_BIN --version 2>&1)" >&2
  "$PYTHON_BIN" -m venv .venv || { echo "[setup] python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
  .venv/bin/python -m pip install -q --upgrade pip >&2
fi
echo "[setup] installing hphawkes_py$1 into .venv (editable)" >&2
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".$1" >&2 || { echo "[setup] pip install failed" >&2; exit 1; }
export PATH="$REPO/.venv/bin:$PATH"
export RETICULATE_PYTHON="$REPO/.venv/bin/python"
