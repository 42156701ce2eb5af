#!/usr/bin/env bash
# What a Binder build does, without Docker: a clean clone of HEAD, a fresh environment with the
# pip packages of environment.yml, postBuild run from the repository folder, then a JupyterLab
# server started there the way Binder starts it. It checks that the course's settings reach
# JupyterLab, that the start link opens, and that lesson 00 runs in that environment.
#
#   bash tools/binder_dry_run.sh            (make binder-dry-run; about 80 s, mostly pip)
#
# Run it as an ordinary user, as Binder's postBuild runs. Conda itself is not used: the Python is
# the one on PATH, so this checks the files, not conda-forge's Python build.
set -euo pipefail

for tool in git curl python3; do
	command -v "$tool" >/dev/null || { echo "binder_dry_run.sh needs $tool on PATH"; exit 1; }
done
repo="$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)"
work="$(mktemp -d)"
server_pid=""
cleanup() {
	if [ -n "$server_pid" ]; then # stop the server (and so its kernels), then make sure
		kill "$server_pid" 2>/dev/null || true
		for _ in $(seq 20); do
			kill -0 "$server_pid" 2>/dev/null || break
			sleep 0.5
		done
		kill -KILL "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work" || true
}
trap cleanup EXIT

export NB_PYTHON_PREFIX="$work/env" # Binder's is /srv/conda/envs/notebook
git clone --quiet "$repo" "$work/course"
cd "$work/course"

echo "1. environment: python3 -m venv, then the pip section of environment.yml"
python3 -m venv "$NB_PYTHON_PREFIX"
export PATH="$NB_PYTHON_PREFIX/bin:$PATH"
sed -n 's/^ *- \([A-Za-z0-9_.-]*==[^ ]*\)$/\1/p' environment.yml >"$work/pins.txt"
pip install --quiet --disable-pip-version-check -r "$work/pins.txt"

echo "2. postBuild, from the repository folder"
bash ./postBuild

echo "3. JupyterLab started in the repository folder"
port="$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
token="dry-run-$$"
root_flag=()
if [ "$(id -u)" = 0 ]; then root_flag=(--allow-root); fi # CI runs as root; Binder does not
jupyter lab --no-browser --ip=127.0.0.1 --port="$port" --IdentityProvider.token="$token" \
	${root_flag[@]+"${root_flag[@]}"} >"$work/lab.log" 2>&1 &
server_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 120); do
	curl -fs "$base/api?token=$token" >/dev/null && break
	sleep 0.5
done
curl -fs "$base/api?token=$token" >/dev/null ||
	{ echo "FAILED: JupyterLab did not answer within 60 s; its log:"; tail -20 "$work/lab.log"; exit 1; }
setting_default() { # plugin, key: the default JupyterLab reports, overrides.json included
	curl -fs "$base/lab/api/settings/$1?token=$token" |
		python -c "import json, sys; print(json.load(sys.stdin)['schema']['properties']['$2'].get('default'))"
}
viewers="$(setting_default @jupyterlab/docmanager-extension:plugin defaultViewers)"
news="$(setting_default @jupyterlab/apputils-extension:notification fetchNews)"
status="$(curl -s -o /dev/null -w '%{http_code}' "$base/lab/tree/notebooks/00_start_here.ipynb?token=$token")"
echo "   .py files open with: $viewers"
echo "   news pop-up (fetchNews): $news"
echo "   lab/tree/notebooks/00_start_here.ipynb: HTTP $status"
[[ "$viewers" == *"Jupytext Notebook"* && "$news" == "false" && "$status" == "200" ]] ||
	{ echo "FAILED: the settings or the start link are not what Binder would serve"; exit 1; }
# A kernel started and run through the server, as the browser does (websocket): with the
# course's server settings its connection is encrypted, so ipykernel logs no "running over TCP
# without encryption" warning.
python - "$base" "$token" <<'PY' || { echo "FAILED: no kernel ran code through the server"; exit 1; }
import asyncio, json, sys, urllib.request, uuid
from tornado.websocket import websocket_connect

base, token = sys.argv[1], sys.argv[2]
request = urllib.request.Request(f"{base}/api/kernels?token={token}", data=b'{"name": "python3"}',
                                 headers={"Content-Type": "application/json"}, method="POST")
kernel = json.load(urllib.request.urlopen(request))["id"]

async def run() -> str:
    url = f"{base.replace('http', 'ws', 1)}/api/kernels/{kernel}/channels?token={token}"
    ws = await websocket_connect(url)
    header = {"msg_id": uuid.uuid4().hex, "session": uuid.uuid4().hex, "username": "dry-run",
              "msg_type": "execute_request", "version": "5.3"}
    await ws.write_message(json.dumps({"header": header, "parent_header": {}, "metadata": {},
                                       "content": {"code": "print(6 * 7)", "silent": False},
                                       "channel": "shell", "buffers": []}))
    while True:
        message = json.loads(await ws.read_message())
        if message.get("msg_type") == "stream":
            return message["content"]["text"].strip()

assert asyncio.run(asyncio.wait_for(run(), 60)) == "42"
PY
if grep -q "without encryption" "$work/lab.log"; then
	echo "FAILED: the kernel's connection is not encrypted (jupyter_server_config.json not used)"
	exit 1
fi
echo "   a kernel ran print(6 * 7) through the server; its connection is encrypted"

echo "4. lesson 00 run top to bottom in that environment"
jupyter nbconvert --to notebook --execute --stdout notebooks/00_start_here.ipynb >/dev/null
echo "5. lesson 09's model, fetched by postBuild, loads offline and verified"
python -c "from helpers.pretrained import load_minilm; print('  ', load_minilm().forward('the cat sat on the mat')[2].shape)"
echo "Binder dry run passed."
