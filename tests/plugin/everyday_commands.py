"""Everyday shell commands of the kinds developers type in a project (git, Python, packaging, containers, the
shell's own tools), and the ways they are put together (``cd … &&``, pipes, redirections, loops, ``$(…)``), for
the hook's fuzz test: at least 2,000 distinct lines, and mutations of them (:func:`mutations`) that break quoting,
add bytes bash never sees in a path, nest them in substitutions and ``sh -c``, or cut them short.

The lines name the files of the project the test builds (``src/``, ``tests/``, ``out/``…) and nothing protected:
what the hook must allow among them is measured by the test, not assumed here.
"""

from __future__ import annotations

import random

BASE = r"""
git status
git status --short
git status -sb
git log --oneline -20
git log --graph --oneline --all --decorate
git log -p -1
git log --since="2 weeks ago" --author="$(git config user.name)"
git diff
git diff --stat
git diff --cached
git diff HEAD~1 -- src/
git diff main...HEAD --name-only
git show HEAD
git show HEAD:src/app.py
git show --stat HEAD~2
git blame src/app.py
git blame -L 10,40 src/app.py
git add -A
git add src/app.py tests/test_app.py
git add -p
git commit -m "Fix the reward parser"
git commit -am "wip"
git commit --amend --no-edit
git commit -m "Add tests for edge cases" -m "Covers empty input and unicode."
git push
git push -u origin feature/parser
git push --force-with-lease
git fetch
git fetch --all --prune
git fetch origin main
git branch
git branch -a
git branch -vv
git branch -d old-feature
git checkout -b feature/parser
git switch -c fix/typo
git remote -v
git tag v0.2.0
git tag -l
git stash list
git stash show -p stash@{0}
git rev-parse HEAD
git rev-parse --show-toplevel
git rev-parse --abbrev-ref HEAD
git ls-files | wc -l
git grep -n "TODO"
git grep -l reward -- '*.py'
git shortlog -sn
git describe --tags
git config --get remote.origin.url
git reflog -10
git clean -n
git cherry -v
git worktree list
git submodule status
ls
ls -la
ls -lh src
ls -1 tests | head
ls -ltr | tail -5
ls *.py
ls -d */
cd src
cd ..
cd ~
cd -
pwd
tree -L 2
tree -I node_modules -L 3
cat README.md
cat pyproject.toml
cat src/app.py | head -50
head -n 20 src/app.py
head -c 200 data/train.jsonl
tail -n 50 logs/app.log
tail -f logs/app.log
less README.md
wc -l src/*.py
wc -l data/train.jsonl
du -sh .
du -sh * | sort -h
df -h
file data/train.jsonl
stat src/app.py
grep -rn "def main" src/
grep -r "import torch" --include="*.py" .
grep -c "" data/train.jsonl
grep -v "^#" config.ini
grep -E "error|warning" logs/app.log
grep -i todo -r src tests
rg TODO
rg -n "reward" src
rg --files | head
rg -l "import numpy" -g "*.py"
rg -t py "class .*Trainer"
find . -name "*.py" | head
find . -name "*.pyc" -delete
find . -type d -name __pycache__ -prune -exec rm -rf {} +
find src -name "*.py" -newer setup.cfg
find . -maxdepth 2 -type f -size +1M
find . -name "*.log" -mtime +7
find tests -name "test_*.py" | xargs grep -l fixture
fd -e py
sed -n '1,40p' src/app.py
sed -i 's/old_name/new_name/g' src/app.py
sed -i.bak 's/DEBUG = True/DEBUG = False/' config.py
sed -e 's/foo/bar/' input.txt > output.txt
awk '{print $1}' data/scores.tsv | sort | uniq -c
awk -F, 'NR>1 {sum += $3} END {print sum}' data/results.csv
jq . config.json
jq '.name' package.json
jq -r '.dependencies | keys[]' package.json
jq -c 'select(.score > 0.5)' data/train.jsonl | head
yq '.services' docker-compose.yml
sort data/words.txt | uniq | wc -l
sort -u -o data/words.txt data/words.txt
cut -d, -f1,3 data/results.csv | head
tr '[:upper:]' '[:lower:]' < input.txt
diff -u old.txt new.txt
diff -r src/ backup/src/
cmp a.bin b.bin
sha256sum dist/*.whl
md5sum data/train.jsonl
echo hello
echo "$PATH"
echo $HOME
echo "Build finished at $(date)"
printf '%s\n' a b c
printf 'count: %d\n' 42
date
date +%Y-%m-%d
whoami
hostname
uname -a
which python3
type python3
command -v node
env | grep -i proxy
printenv HOME
export DEBUG=1
export PATH="$HOME/.local/bin:$PATH"
unset DEBUG
source .venv/bin/activate
. .venv/bin/activate
deactivate
alias ll='ls -la'
history | tail -20
clear
true
false
exit 0
sleep 2
mkdir -p build/logs
mkdir tmp
touch notes.md
touch src/__init__.py
cp config.example.json config.json
cp -r src backup/src
cp -a data data.bak
mv notes.md docs/notes.md
mv old_name.py new_name.py
rm tmp/scratch.txt
rm -rf build dist *.egg-info
rm -rf node_modules
rm -f *.log
rmdir tmp
ln -s ../shared/config.json config.json
ln -sf /usr/bin/python3 bin/python
chmod +x scripts/run.sh
chmod 644 config.json
chmod -R u+w build
chown -R $USER build
tar czf backup.tgz src tests
tar xzf archive.tar.gz
tar -tzf archive.tar.gz | head
tar -xvf data.tar -C data/
zip -r src.zip src
unzip archive.zip -d extracted
unzip -l archive.zip
gzip -k data/big.csv
gunzip data/big.csv.gz
curl -s https://api.github.com/repos/octocat/hello-world | jq .stargazers_count
curl -O https://example.com/file.tar.gz
curl -fsSL https://example.com/install.sh -o install.sh
wget https://example.com/data.zip
wget -q -O - https://example.com/robots.txt
ssh user@host
ssh -i ~/.ssh/id_ed25519 user@server 'uptime'
scp report.pdf user@host:/tmp/
rsync -avz src/ user@host:/srv/app/src/
rsync -a --delete build/ /tmp/site/
ps aux | grep python
ps -ef | grep -v grep | grep train
kill 12345
kill -9 12345
pkill -f "python train.py"
top -b -n 1 | head -20
htop
free -h
uptime
nproc
lscpu
nvidia-smi
nvidia-smi --query-gpu=memory.used --format=csv
watch -n 1 nvidia-smi
lsof -i :8000
netstat -tlnp
ss -tlnp
ping -c 3 example.com
dig example.com
python --version
python3 --version
python3
python3 script.py
python3 -m venv .venv
python3 -m pip install -r requirements.txt
python -m pip install --upgrade pip
python3 -m pytest
python3 -m pytest -x -q tests/test_app.py
python -m http.server 8000
python3 -m json.tool config.json
python3 -c "import torch; print(torch.__version__)"
python3 -c 'import sys; print(sys.path)'
python3 -c "print(1 + 1)"
python -c "import numpy as np; print(np.arange(5))"
python3 main.py --config configs/base.yaml
python3 train.py --epochs 3 --lr 1e-4
python3 scripts/prepare_data.py data/raw data/processed
python3 -W ignore script.py
python3 -u train.py | tee train.log
pip install -e .
pip install -e ".[dev]"
pip install requests
pip install "transformers>=4.40"
pip uninstall -y requests
pip list | grep torch
pip freeze > requirements.txt
pip show numpy
pip download torch --no-deps -d wheels
pytest
pytest -q
pytest -x
pytest -k "reward and not slow"
pytest tests/test_app.py::test_main -vv
pytest --cov=src --cov-report=term-missing
pytest -n 4
pytest --lf
ruff check .
ruff check --fix src tests
ruff format .
black src tests
isort src
mypy src
pyright
flake8 src
pylint src/app.py
pre-commit run --all-files
tox -e py311
nox -s tests
uv venv
uv pip install -r requirements.txt
uv run pytest
uv sync
uv add httpx
poetry install
poetry run pytest
poetry add requests
hatch run test
conda activate ml
conda env list
conda install -c conda-forge numpy
jupyter notebook
jupyter lab --no-browser --port 8888
ipython
node --version
node index.js
node -e "console.log(process.version)"
npm install
npm ci
npm install --save-dev typescript
npm run build
npm run test -- --watch
npm test
npm run lint
npx tsc --noEmit
npx prettier --write .
npx eslint src --fix
yarn
yarn add react
yarn build
pnpm install
pnpm test
bun install
deno run main.ts
tsc
cargo build
cargo build --release
cargo test
cargo run -- --help
cargo fmt
cargo clippy -- -D warnings
cargo add serde --features derive
rustc --version
go build ./...
go test ./...
go run main.go
go mod tidy
go vet ./...
gofmt -w .
make
make -j4
make test
make clean
make install PREFIX=$HOME/.local
cmake -S . -B build
cmake --build build -j
ctest --test-dir build
gcc -O2 -o app main.c
g++ -std=c++17 -o app main.cpp
./app
./scripts/run.sh
bash scripts/setup.sh
sh install.sh
docker ps
docker ps -a
docker images
docker build -t myapp .
docker build -t myapp:latest -f Dockerfile.dev .
docker run --rm -it myapp bash
docker run -d -p 8080:80 --name web nginx
docker run --rm -v "$PWD":/app -w /app python:3.11 python -m pytest
docker logs -f web
docker exec -it web sh
docker stop web
docker rm web
docker compose up -d
docker compose down
docker compose logs -f api
docker system prune -f
kubectl get pods
kubectl get pods -n kube-system
kubectl describe pod api-7d9f8
kubectl logs -f deploy/api
kubectl apply -f k8s/
kubectl delete -f k8s/job.yaml
kubectl port-forward svc/api 8080:80
kubectl config get-contexts
helm list
helm upgrade --install api ./chart -f values.yaml
terraform init
terraform plan
terraform apply -auto-approve
aws s3 ls
aws s3 cp model.bin s3://bucket/models/
gcloud auth list
gh pr list
gh pr create --fill
gh pr checkout 42
gh issue list --label bug
gh run list
gh run watch
tmux new -s train
tmux attach -t train
tmux ls
screen -ls
nohup python3 train.py > train.log 2>&1 &
jobs
fg
bg
wait
time python3 script.py
time make
xargs --version
seq 1 10
seq 1 10 | xargs -n1 echo
yes | head -3
basename src/app.py
dirname src/app.py
realpath src/app.py
readlink -f src/app.py
mktemp -d
tee -a build.log
column -t data/table.txt
nl src/app.py | head
od -c data/small.bin | head
hexdump -C data/small.bin | head
strings build/app | grep version
base64 data/key.txt
openssl rand -hex 16
python3 -c "import secrets; print(secrets.token_hex(16))"
code .
vim src/app.py
nano README.md
open report.html
xdg-open report.html
man grep
tldr tar
ollama list
huggingface-cli whoami
hf download gpt2 --local-dir models/gpt2
accelerate config
accelerate launch train.py
torchrun --nproc_per_node=2 train.py
deepspeed train.py --deepspeed ds_config.json
tensorboard --logdir runs
wandb login
trackio show
mlflow ui
""".strip().splitlines()

COMPOUNDS = [
    "{c}",
    "cd src && {c}",
    "cd tests && {c} && cd ..",
    "{c} | head -20",
    "{c} | tail -n 5",
    "{c} 2>&1 | tail -20",
    "{c} > /tmp/out.txt 2>&1",
    "{c} 2>/dev/null",
    "{c} &> build.log",
    "{c} || echo failed",
    "{c} && echo ok",
    "{c}; echo \"exit: $?\"",
    "time {c}",
    "({c})",
    "{c} &",
    "if {c}; then echo yes; else echo no; fi",
    "timeout 60 {c}",
    "nice -n 10 {c}",
]
LOOPS = [
    "for f in src/*.py; do wc -l \"$f\"; done",
    "for f in *.txt; do mv \"$f\" \"${{f%.txt}}.md\"; done",
    "for i in 1 2 3; do echo \"run $i\"; done",
    "for i in $(seq 1 5); do python3 train.py --seed $i; done",
    "while read -r line; do echo \"$line\"; done < data/list.txt",
    "for d in */; do echo \"$d\"; done",
    "for f in tests/test_*.py; do pytest -q \"$f\" || break; done",
    "for pkg in numpy torch transformers; do pip show \"$pkg\" | head -2; done",
    "count=0; for f in src/*.py; do count=$((count + 1)); done; echo $count",
    "find . -name '*.py' -print0 | xargs -0 wc -l | sort -n | tail",
    "ls data/*.jsonl | xargs -n1 wc -l",
    "grep -rl oldname src | xargs sed -i 's/oldname/newname/g'",
    "git diff --name-only | xargs ruff check",
    "export VERSION=$(git describe --tags) && echo $VERSION",
    "VERSION=$(python3 -c 'import app; print(app.__version__)'); echo \"v$VERSION\"",
    "[ -d build ] || mkdir build",
    "[[ -f .env ]] && source .env",
    "test -f config.json && cat config.json",
    "case \"$1\" in start) echo start;; stop) echo stop;; esac",
    "f() { echo \"arg: $1\"; }; f hello",
    "trap 'echo done' EXIT; sleep 1",
    "cat <<'EOF' > notes.md\n# Notes\n- item one\nEOF",
    "cat <<EOF\nHome is $HOME\nEOF",
    "python3 - <<'EOF'\nimport json\nprint(json.dumps({'a': 1}))\nEOF",
    "python3 <<EOF\nprint('hello')\nEOF",
    "psql -d app <<SQL\nselect count(*) from users;\nSQL",
    "echo 'print(1)' | python3",
    "curl -s https://example.com/install.sh | bash",
    "eval \"$(ssh-agent -s)\"",
    "eval \"$(pyenv init -)\"",
    "source <(kubectl completion bash)",
    "diff <(sort a.txt) <(sort b.txt)",
    "wc -l < data/train.jsonl",
    "python3 train.py 2>&1 | tee -a logs/train.log",
    "mkdir -p out && python3 eval.py > out/eval.json",
    "echo $((3 * 4))",
    "echo ${HOME:-/tmp}",
    "echo \"${PWD##*/}\"",
    "ls ~/.config",
    "ls -la ~/.local/share",
    "du -sh ~/.cache/* 2>/dev/null | sort -h | tail",
    "cat ~/.bashrc | grep alias",
    "echo $'tab\\there'",
    "printf '%s\\n' \"$(git log -1 --format=%s)\"",
    "git log --format='%h %s' | grep -i fix | head",
    "git branch --merged | grep -v main | xargs git branch -d",
    "docker ps -q | xargs docker stop",
    "kill $(lsof -t -i:8000)",
    "pgrep -f train.py && echo running",
    "sleep 5 && curl -s localhost:8000/health",
]


def everyday_commands() -> list[str]:
    """At least 2,000 distinct command lines: each base command alone and in a few of the usual compositions,
    and the loops, here-documents and substitutions."""
    rng = random.Random(53)
    found: dict[str, None] = {}
    for c in BASE:
        found[c] = None
        for form in rng.sample(COMPOUNDS[1:], 4):
            found[form.format(c=c)] = None
    for c in LOOPS:
        found[c.replace("{{", "{").replace("}}", "}")] = None
    return list(found)


def mutations(command: str, rng: random.Random, count: int = 3) -> list[str]:
    """Lines a confused or hostile agent might send instead: quoting broken, control and non-UTF-8-looking
    bytes, NULs, deep nesting, a cut in the middle, long words."""
    def one(c: str) -> str:
        k = rng.randrange(len(c) + 1)
        pick = rng.randrange(14)
        if pick == 0:
            return c[:k]
        if pick == 1:
            return c[:k] + rng.choice(["'", '"', "`", "\\", "$(", "${", "<<", "|", "&&", ";", "(", ")"]) + c[k:]
        if pick == 2:
            return c[:k] + rng.choice(["\x00", "\x01", "\x7f", "\ufffd", "\u202e", "é", "\U0001f600"]) + c[k:]
        if pick == 3:
            return f"$({c})"
        if pick == 4:
            return f"bash -c {c!r}"
        if pick == 5:
            return f"eval \"$(echo {c!r})\""
        if pick == 6:
            return "$(" * 12 + c + ")" * 12
        if pick == 7:
            return c + " " + "x" * 5000
        if pick == 8:
            return c.replace(" ", "\\\n", 2)
        if pick == 9:
            return c + " # trailing comment \\"
        if pick == 10:
            return f"for x in {c}; do echo $x; done"
        if pick == 11:
            return c + " /proc/1/cwd/x /proc/self/root/etc " + "../" * 40
        if pick == 12:
            return "{ " + c + "; } 2>&1 <<'EOF'\n" + c + "\\\nEOF"
        return c[::-1]
    return [one(command) for _ in range(count)]
