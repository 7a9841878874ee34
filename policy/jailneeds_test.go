package policy_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/bench/corpus"
	"github.com/loopguard/loopguard/fsx"
	"github.com/loopguard/loopguard/policy"
	"github.com/loopguard/loopguard/shellparse"
)

const (
	jProject = "/home/u/proj"
	jHome    = "/home/u"
)

// rights is what NeedsBeyondJail says of argv, its rights joined by "+"
// in the order found ("" for nil).
func rights(argv []string, cwd string) string {
	var r []string
	for _, n := range policy.NeedsBeyondJail(argv, cwd, jProject, jHome) {
		r = append(r, n.Right)
	}
	return strings.Join(r, "+")
}

func TestNeedsBeyondJail(t *testing.T) {
	const (
		N  = policy.JailNetwork
		O  = policy.JailOutside
		G  = policy.JailGit
		NO = N + "+" + O
		NG = N + "+" + G
		L  = policy.JailLinks
	)
	for _, c := range []struct {
		cmd  string // split at blanks, unless argv is set
		argv []string
		cwd  string // "" = the project
		want string
	}{
		// Network: downloads and uploads.
		{cmd: "curl -sSL https://example.com", want: N},
		{cmd: "curl localhost:3000/health", want: N},
		{cmd: "wget https://example.com/x.tgz", want: N},
		{cmd: "curl -sS -o dl/x.tgz https://example.com/x", want: N},
		{cmd: "curl -sS -o /srv/x.tgz https://example.com/x", want: NO},
		{cmd: "curl -sS --output=/srv/x.tgz https://example.com/x", want: NO},
		{cmd: "curl -sS --output-dir /srv -O https://example.com/x", want: NO},
		{cmd: "wget -O /srv/x.tgz https://example.com/x", want: NO},
		{cmd: "wget -P /srv https://example.com/x", want: NO},
		{cmd: "wget -O x.tgz https://example.com/x", want: N},
		{cmd: "ssh host uptime", want: N},
		{cmd: "scp a host:b", want: N},
		{cmd: "rsync -av src/ host:/srv/", want: N},
		{cmd: "rsync -av src/ /srv/www/", want: O},
		{cmd: "rsync -av src/ build/", want: ""},
		{cmd: "nc -z localhost 5432", want: N},
		{cmd: "ncat host 80", want: N},
		{cmd: "telnet host 25", want: N},
		{cmd: "ftp host", want: N},
		{cmd: "dig example.com", want: N},
		{cmd: "nslookup example.com", want: N},
		{cmd: "host example.com", want: N},
		{cmd: "ping -c1 8.8.8.8", want: N},
		// VCS remotes.
		{cmd: "git fetch origin", want: NG},
		{cmd: "git pull --rebase", want: NG},
		{cmd: "git push origin main", want: NG},
		{cmd: "git -C sub push", want: NG},
		{cmd: "git --no-pager -c core.pager=cat push", want: NG},
		{cmd: "git clone https://github.com/a/b", want: NG},
		{cmd: "git clone https://github.com/a/b /opt/b", want: NO},
		{cmd: "git ls-remote origin", want: N},
		{cmd: "git submodule update --init", want: NG},
		{cmd: "git remote update", want: NG},
		{cmd: "git remote show origin", want: N},
		{cmd: "gh pr list", want: N},
		{cmd: "gh api repos/a/b", want: N},
		{cmd: "hg pull", want: N},
		{cmd: "svn checkout https://x/y", want: N},
		// Package installs and fetches.
		{cmd: "npm install", want: N},
		{cmd: "npm i lodash", want: N},
		{cmd: "npm add -D vitest", want: N},
		{cmd: "npm ci", want: N},
		{cmd: "npm --prefix web install", want: N},
		{cmd: "npm install -g typescript", want: NO},
		{cmd: "npm --global i pnpm", want: NO},
		{cmd: "npm update", want: N},
		{cmd: "npm publish", want: N},
		{cmd: "npm view react version", want: N},
		{cmd: "npm info react", want: N},
		{cmd: "npm outdated", want: N},
		{cmd: "npm audit", want: N},
		{cmd: "npm init vite@latest app", want: N},
		{cmd: "npm exec -- tsc --noEmit", want: N},
		{cmd: "pnpm install", want: N},
		{cmd: "pnpm i", want: N},
		{cmd: "pnpm add zod", want: N},
		{cmd: "pnpm --filter web add zod", want: N},
		{cmd: "pnpm dlx create-next-app", want: N},
		{cmd: "yarn", want: N},
		{cmd: "yarn install --frozen-lockfile", want: N},
		{cmd: "yarn add react", want: N},
		{cmd: "yarn dlx prettier --check .", want: N},
		{cmd: "yarn global add serve", want: NO},
		{cmd: "bun install", want: N},
		{cmd: "bun add hono", want: N},
		{cmd: "bunx prettier --check .", want: N},
		{cmd: "npx tsc --noEmit", want: N},
		{cmd: "npx -y create-react-app x", want: N},
		{cmd: "npx --no-install tsc --noEmit", want: ""},
		{cmd: "npx --offline eslint .", want: ""},
		{cmd: "pip install requests", want: N},
		{cmd: "pip3 install -r requirements.txt", want: N},
		{cmd: "pip install --user black", want: NO},
		{cmd: "pip download x", want: N},
		{cmd: "python3 -m pip install -e .", want: N},
		{cmd: ".venv/bin/pip install pytest", want: N},
		{cmd: "uv pip install ruff", want: N},
		{cmd: "uv sync", want: N},
		{cmd: "uv add httpx", want: N},
		{cmd: "uv lock", want: N},
		{cmd: "uv run --with rich python x.py", want: N},
		{cmd: "uvx ruff check .", want: N},
		{cmd: "poetry install", want: N},
		{cmd: "poetry add x", want: N},
		{cmd: "poetry lock", want: N},
		{cmd: "poetry update", want: N},
		{cmd: "pipenv install", want: N},
		{cmd: "go get example.com/x@v1", want: N},
		{cmd: "go install golang.org/x/tools/cmd/goimports@latest", want: NO},
		{cmd: "go install ./cmd/x", want: O},
		{cmd: "go mod download", want: N},
		{cmd: "go mod tidy", want: N},
		{cmd: "go -C sub mod tidy", want: N},
		{cmd: "go run golang.org/x/vuln/cmd/govulncheck@latest ./...", want: N},
		{cmd: "cargo fetch", want: N},
		{cmd: "cargo add serde", want: N},
		{cmd: "cargo install ripgrep", want: NO},
		{cmd: "cargo update", want: N},
		{cmd: "cargo publish", want: N},
		{cmd: "cargo search x", want: N},
		{cmd: "cargo +nightly fetch", want: N},
		{cmd: "gem install rails", want: NO},
		{cmd: "bundle install", want: N},
		{cmd: "bundle", want: N},
		{cmd: "composer install", want: N},
		{cmd: "composer require x/y", want: N},
		{cmd: "mvn dependency:resolve", want: N},
		{cmd: "mvn -o dependency:resolve", want: ""},
		{cmd: "mvn deploy", want: N},
		{cmd: "mvn clean install", want: O},
		{cmd: "gradle wrapper", want: N},
		{cmd: "./gradlew dependencies", want: N},
		{cmd: "./gradlew build --refresh-dependencies", want: N},
		{cmd: "docker pull alpine", want: NO},
		{cmd: "docker push x", want: NO},
		{cmd: "docker build -t x .", want: NO},
		{cmd: "docker run --rm alpine true", want: NO},
		{cmd: "docker compose up -d", want: NO},
		{cmd: "docker ps", want: O},
		{cmd: "podman pull alpine", want: NO},
		{cmd: "apt-get install -y jq", want: NO},
		{cmd: "apt update", want: NO},
		{cmd: "brew install jq", want: NO},
		{cmd: "brew update", want: NO},
		{cmd: "rustup update", want: NO},
		{cmd: "rustup target add wasm32-unknown-unknown", want: NO},
		{cmd: "rustup show", want: ""},
		{cmd: "nvm install 20", want: NO},
		{cmd: "sdk install java", want: NO},
		{cmd: "deno run https://deno.land/x/y.ts", want: N},
		{cmd: "deno run main.ts", want: ""},
		{cmd: "deno install -g x", want: NO},
		// Servers listen on a port.
		{cmd: "python3 -m http.server 8000", want: N},
		{cmd: "uvicorn app:app --reload", want: N},
		{cmd: "npm run dev", want: N},
		{cmd: "npm start", want: N},
		{cmd: "pnpm dev", want: N},
		{cmd: "python manage.py runserver", want: N},
		{cmd: "php artisan serve", want: N},
		{cmd: "php -S localhost:8000", want: N},
		{cmd: "mkdocs serve", want: N},
		{cmd: "npx playwright test", want: N},
		{cmd: "npx playwright install chromium", want: NO},
		{cmd: "psql -h localhost -c select", want: N},
		{cmd: "redis-cli ping", want: N},
		{cmd: "dotnet restore", want: N},
		{cmd: "dotnet add package Newtonsoft.Json", want: N},
		{cmd: "dotnet tool install -g x", want: NO},
		{cmd: "flutter pub get", want: N},
		{cmd: "dart pub add http", want: N},
		{cmd: "pod install", want: N},
		{cmd: "swift package resolve", want: N},
		{cmd: "mix deps.get", want: N},
		{cmd: "cabal update", want: NO},
		{cmd: "pip-compile requirements.in", want: N},
		{cmd: "huggingface-cli download x", want: N},
		{cmd: "ollama run llama3", want: N},
		{cmd: "npx prisma migrate dev", want: N},
		{cmd: "npx drizzle-kit push", want: N},
		// Wrappers.
		{cmd: "env FOO=1 npm install", want: N},
		{cmd: "env -i PATH=/usr/bin curl x", want: N},
		{cmd: "sudo apt-get install jq", want: NO},
		{cmd: "sudo ls", want: O},
		{cmd: "time npm ci", want: N},
		{cmd: "nice -n 10 cargo fetch", want: N},
		{cmd: "nohup git push", want: NG},
		{cmd: "timeout 60 npm install", want: N},
		{cmd: "timeout -s KILL 5s curl x", want: N},
		{cmd: "xargs -n1 curl -O", want: N},
		{cmd: "xargs -I{} cp {} /etc/", want: O},
		{cmd: "xargs rm", want: ""},
		{cmd: "stdbuf -oL npm test", want: ""},
		{cmd: "command -v curl", want: ""},
		{argv: []string{"bash", "-c", "cd web && npm install"}, want: N},
		{argv: []string{"sh", "-c", "go test ./... | tail -5"}, want: ""},
		{argv: []string{"bash", "-o", "pipefail", "-ec", "npm ci && npm test"}, want: N},
		{argv: []string{"bash", "deploy.sh", "-c", "npm ci"}, want: ""},
		{cmd: "python3 script.py -m pip install x", want: ""},
		{cmd: "python3 -u -m pip install x", want: N},
		{argv: []string{"sed", "-i", "/^$/d", "notes.txt"}, want: ""},
		{argv: []string{"sed", "-i", "-e", "s/a/b/", "/etc/hosts"}, want: O},
		{argv: []string{"bash", "-lc", "git add x; git commit -m y"}, want: G},
		{cmd: "uv run pip install x", want: N},
		{cmd: "poetry run pytest", want: ""},
		{cmd: "bundle exec rake test", want: ""},
		{cmd: "find . -name x -exec curl -T {} host ;", want: N},
		// Outside: writes outside the project, root, services, signals.
		{cmd: "cp build/app /usr/local/bin/", want: O},
		{cmd: "cp /etc/hosts .", want: ""},
		{cmd: "cp -t /opt a b", want: O},
		{cmd: "mv ~/Downloads/x.csv data/", want: O},
		{cmd: "mv a.txt b.txt", want: ""},
		{cmd: "tee ~/.bashrc", want: O},
		{cmd: "ln -sf /home/u/proj/bin/x /home/u/bin/x", want: O},
		// Links: the jail makes no symbolic link in the project.
		{cmd: "ln -s ../shared lib", want: L},
		{cmd: "ln -sf target src/link", want: L},
		{cmd: "ln --symbolic -t bin ../tool", want: L},
		{cmd: "ln -s /home/u/proj/x /tmp/x", want: ""},
		{cmd: "ln a b", want: ""},
		{cmd: "python3 -m venv .venv", want: L},
		{cmd: "python -m venv --copies /home/u/proj/env", want: L},
		{cmd: "python3 -m venv /tmp/v", want: ""},
		{cmd: "python3 -m venv $TMPDIR/v", want: ""},
		{cmd: "ln -s a $", want: ""},
		{cmd: "python3 -m virtualenv venv", want: L},
		{cmd: "virtualenv -p python3 .venv", want: L},
		{cmd: "uv venv", want: L},
		{cmd: "uv venv --python 3.12 env", want: L},
		{cmd: "uv venv /tmp/v", want: ""},
		{cmd: "install -m 755 x /usr/local/bin/x", want: O},
		{cmd: "rm -rf ../other", want: O},
		{cmd: "rm ../proj/x", want: ""},
		{cmd: "rm -f /home/u/.config/app.json", want: O},
		{cmd: "touch ~/.hushlogin", want: O},
		{cmd: "mkdir -p ~/bin", want: O},
		{cmd: "mkdir -p /tmp/scratch", want: ""},
		{cmd: "rm -rf /tmp/build", want: ""},
		{cmd: "cp x /var/tmp/y", want: ""},
		{cmd: "chmod 600 ~/.ssh/id_ed25519", want: O},
		{cmd: "chmod +x /home/u/proj/run.sh", want: ""},
		{cmd: "sed -i s/a/b/ /etc/hosts", want: O},
		{cmd: "sed s/a/b/ /etc/hosts", want: ""},
		{cmd: "rm ../x", cwd: jProject + "/sub", want: ""},
		{cmd: "rm ../../x", cwd: jProject + "/sub", want: O},
		{cmd: "rm x", cwd: "/srv", want: O},
		{cmd: "tar -czf /srv/backup.tgz src", want: O},
		{cmd: "tar -xzf a.tgz -C /opt", want: O},
		{cmd: "tar -xzf a.tgz", want: ""},
		{cmd: "unzip a.zip -d ~/apps", want: O},
		{cmd: "pipx install black", want: O},
		{cmd: "systemctl --user restart app", want: O},
		{cmd: "crontab -e", want: O},
		{cmd: "git config --global user.name x", want: O},
		{cmd: "git config user.name x", want: G},
		{cmd: "git config --get user.name", want: ""},
		{cmd: "git config --global --get user.name", want: ""},
		{cmd: "ssh-keygen -t ed25519", want: O},
		{cmd: "kill 1234", want: O},
		{cmd: "kill %1", want: ""},
		{cmd: "pkill -f vite", want: O},
		{cmd: "killall node", want: O},
		{cmd: "make install", want: O},
		{cmd: "go env -w GOPROXY=direct", want: O},
		{cmd: "npm link", want: O},
		{cmd: "tmux new -d", want: O},
		{cmd: "security find-generic-password -s x -w", want: O},
		{cmd: "opencode run x", want: N},
		// git: the repository's own directory.
		{cmd: "git add -A", want: G},
		{cmd: "git commit -m x", want: G},
		{cmd: "git checkout -b feat", want: G},
		{cmd: "git checkout -- file.go", want: G},
		{cmd: "git switch main", want: G},
		{cmd: "git restore --staged x", want: G},
		{cmd: "git reset --hard", want: G},
		{cmd: "git stash", want: G},
		{cmd: "git stash pop", want: G},
		{cmd: "git stash list", want: ""},
		{cmd: "git stash show -p", want: ""},
		{cmd: "git merge main", want: G},
		{cmd: "git rebase -i HEAD~3", want: G},
		{cmd: "git cherry-pick abc", want: G},
		{cmd: "git revert abc", want: G},
		{cmd: "git tag v1.0", want: G},
		{cmd: "git tag -a v1 -m x", want: G},
		{cmd: "git tag", want: ""},
		{cmd: "git tag -l v*", want: ""},
		{cmd: "git mv a b", want: G},
		{cmd: "git rm --cached x", want: G},
		{cmd: "git am x.patch", want: G},
		{cmd: "git apply --index x.patch", want: G},
		{cmd: "git apply x.patch", want: ""},
		{cmd: "git apply --check x.patch", want: ""},
		{cmd: "git init", want: G},
		{cmd: "git worktree add ../wt", want: O + "+" + G},
		{cmd: "git worktree add wt", want: G},
		{cmd: "git worktree list", want: ""},
		{cmd: "git notes add -m x", want: G},
		{cmd: "git gc", want: G},
		{cmd: "git branch feat", want: G},
		{cmd: "git branch -d feat", want: G},
		{cmd: "git branch -m old new", want: G},
		{cmd: "git branch", want: ""},
		{cmd: "git branch -a", want: ""},
		{cmd: "git branch --show-current", want: ""},
		{cmd: "git branch -vv", want: ""},
		{cmd: "git -C /srv/repo commit -m x", want: O},
		{cmd: "git co main", want: G},
		{cmd: "rm -f .git/index.lock", want: G},
		{cmd: "cp hooks/pre-commit .git/hooks/", want: G},
		{cmd: "rm x", cwd: jProject + "/.git", want: G},
		{cmd: "rm .gitignore", want: ""},
		{cmd: "pre-commit install", want: G},
		{cmd: "npm version patch", want: G},
		{cmd: "git status", want: ""},
		{cmd: "git diff --stat", want: ""},
		{cmd: "git log --oneline -5", want: ""},
		{cmd: "git show HEAD", want: ""},
		{cmd: "git -C sub status", want: ""},
		{cmd: "git rev-parse HEAD", want: ""},
		{cmd: "git remote -v", want: ""},
		{cmd: "git blame x", want: ""},
		{cmd: "git grep foo", want: ""},
		{cmd: "git ls-files", want: ""},
		{cmd: "git clean -fd", want: ""},
		{cmd: "git --version", want: ""},
		{cmd: "gh --version", want: ""},
		{cmd: "gh help", want: ""},
	} {
		argv := c.argv
		name := strings.Join(argv, " ")
		if argv == nil {
			argv, name = strings.Fields(c.cmd), c.cmd
		}
		cwd := c.cwd
		if cwd == "" {
			cwd = jProject
		}
		if got := rights(argv, cwd); got != c.want {
			t.Errorf("%s (in %s): %q, want %q (%v)", name, cwd, got, c.want, policy.NeedsBeyondJail(argv, cwd, jProject, jHome))
		}
	}
}

// TestNpxUnlessInstalled: npx and bunx of a package name download it
// only when no node_modules/.bin of the directory or a parent in the
// project has it; the caller looks.
func TestNpxUnlessInstalled(t *testing.T) {
	sub := jProject + "/web"
	for _, c := range []struct {
		cmd    string
		cwd    string
		unless []string
	}{
		{"npx tsc --noEmit", sub, []string{sub + "/node_modules/.bin/tsc", jProject + "/node_modules/.bin/tsc"}},
		{"bunx eslint .", jProject, []string{jProject + "/node_modules/.bin/eslint"}},
		{"npx -y @biomejs/biome check", jProject, []string{jProject + "/node_modules/.bin/biome"}},
		{"npx tsc", "/srv/x", []string{"/srv/x/node_modules/.bin/tsc"}},
		{"npx create-vite@latest app", jProject, nil},
		{"npx -p typescript tsc", jProject, nil},
		{"pnpm dlx tsc", jProject, nil},
		{"npx vite", jProject, nil}, // vite listens: network whatever is installed
	} {
		needs := policy.NeedsBeyondJail(strings.Fields(c.cmd), c.cwd, jProject, jHome)
		if len(needs) != 1 || needs[0].Right != policy.JailNetwork {
			t.Errorf("%s: %+v, want one network need", c.cmd, needs)
			continue
		}
		if !slices.Equal(needs[0].Unless, c.unless) {
			t.Errorf("%s: unless %q, want %q", c.cmd, needs[0].Unless, c.unless)
		}
	}
}

// TestOrdinaryWorkNeedsNothing: the local work an agent does most runs in
// the jail without a question.
func TestOrdinaryWorkNeedsNothing(t *testing.T) {
	for _, cmd := range []string{
		"go test ./...", "go test -v -run TestX ./pkg", "go build ./...", "go build -o bin/app .", "go vet ./...", "go run .",
		"go run ./cmd/x", "go fmt ./...", "go generate ./...", "go list -m all", "go version", "go mod graph", "gofmt -l .",
		"npm test", "npm run build", "npm run lint", "npm run test -- --watch=false", "npm ls", "npm --version",
		"pnpm test", "pnpm run build", "pnpm lint", "pnpm exec tsc --noEmit", "pnpm", "yarn test", "yarn build", "yarn lint",
		"bun test", "bun run build", "node scripts/x.js", "tsc --noEmit", "./node_modules/.bin/tsc -p .",
		"eslint .", "prettier --write src", "jest", "vitest run",
		"cargo check", "cargo test", "cargo build --release", "cargo clippy -- -D warnings", "cargo fmt", "cargo run --bin x",
		"pytest -q", "python3 -m pytest tests/", "python3 script.py", "python -c print(1)",
		"ruff check .", "black .", "mypy src", "uv run pytest", "uv run ruff check .", "poetry run pytest",
		"make", "make test", "make -C sub build", "cmake --build build", "ls -la", "cat README.md", "head -50 x",
		"tail -30 x", "grep -rn foo src", "rg foo", "find . -name *.go", "wc -l x", "sed -i s/a/b/ src/x.go",
		"sed -n 1,20p x", "rm -f src/tmp.txt", "rm -rf build dist", "mkdir -p src/new", "touch x", "cp a b", "mv a b",
		"chmod +x run.sh", "echo hi", "pwd", "cd src", "diff a b", "jq .name package.json", "awk {print} x",
		"tar -czf out.tgz src", "unzip -o a.zip", "sort x", "true", "sleep 1", "which go", "env", "date",
		"git status", "git diff", "git log", "git show", "docker --version", "pip list", "pip show x", "pip freeze",
		"pip --version", "uv --version", "cargo --version", "rustc --version", "javac Main.java", "java Main",
		"mvn test", "mvn package", "./gradlew build", "./gradlew test", "dotnet build", "dotnet test",
		"bundle exec rspec", "rake test", "php artisan test", "sqlite3 app.db .tables", "dotnet run", "flutter test",
		"swift build", "swift test", "mix test", "mix compile", "cabal build", "stack test", "mkdocs build", "cabal init", "npx --no-install prisma generate", "composer dump-autoload", "deno test", "deno fmt",
	} {
		if got := policy.NeedsBeyondJail(strings.Fields(cmd), jProject, jProject, jHome); got != nil {
			t.Errorf("%s: %v, want nil", cmd, got)
		}
	}
}

func TestJailWritesOutside(t *testing.T) {
	for _, c := range []struct {
		p, cwd string
		want   bool
	}{
		{"x", jProject, false},
		{"./a/../b", jProject, false},
		{"..", jProject, true},
		{"../proj2/x", jProject, true},
		{jProject + "/x", "/", false},
		{jProject, "/", false},
		{jProject + "x/y", "/", true},
		{"~/x", jProject, true},
		{"~", jProject, true},
		{"~root/x", jProject, true},
		{"/tmp/x", jProject, false},
		{"/var/tmp/x", jProject, false},
		{"/dev/null", jProject, false},
		{"/dev/stderr", jProject, false},
		{"/dev/sda", jProject, true},
		{"/etc/hosts", jProject, true},
		{"", jProject, false},
		{"-", jProject, false},
	} {
		if got := policy.JailWritesOutside(c.p, c.cwd, jProject, jHome); got != c.want {
			t.Errorf("JailWritesOutside(%q, %q) = %v, want %v", c.p, c.cwd, got, c.want)
		}
	}
}

// TestNeedsBeyondJailTruncated: every prefix and suffix of the table's
// commands and of real ones is judged without a panic (the table reads
// words at fixed offsets after options that may be the last word).
func TestNeedsBeyondJailTruncated(t *testing.T) {
	cmds := [][]string{}
	for _, s := range []string{
		"git -C", "git -c x", "git clone", "git worktree add", "git config --global", "npm --prefix", "npm run", "npx -p",
		"npx -c", "python -m", "python -mpip install", "python -W", "go -C", "go install x@v", "cargo +nightly", "docker compose",
		"env -u", "env -S", "env -C", "timeout 5", "timeout -s", "xargs -I", "flock f", "flock -c", "watch -n", "sudo -u",
		"find . -exec", "find -fprint", "tar -cf", "tar czf", "tar -xC", "unzip -d", "bash -c", "bash -o", "sh -ec", "eval",
		"uv run --with", "uv pip", "uv tool run", "rustup run", "poetry run", "pipenv run", "bundle exec", "conda run -n",
		"kill -s", "cp -t", "ln -t", "sed -i", "sed -i -e", "rsync -e", "pip install --target", "gem install -i",
		"cargo install --root", "mvn -o", "gradle -p", "nvm exec", "pnpm exec", "yarn dlx", "bun x", "deno install -g",
		"make -C", "git branch --sort", "git tag -l", "git submodule", "git remote show", "git lfs", "git archive -o",
	} {
		cmds = append(cmds, strings.Fields(s))
	}
	for _, argv := range cmds {
		for i := range len(argv) + 1 {
			for _, a := range [][]string{argv[:i], argv[i:], append(append([]string{}, argv...), "")} {
				policy.NeedsBeyondJail(a, jProject, jProject, jHome)
				policy.NeedsBeyondJail(a, "/", jProject, "")
			}
		}
	}
}

// TestNeedsBeyondJailWhy: every need says why, naming the program.
func TestNeedsBeyondJailWhy(t *testing.T) {
	for _, c := range []struct{ cmd, why string }{
		{"curl -s http://127.0.0.1:48123/v1/health", "127.0.0.1:48123"},
		{"security find-generic-password -s x -w", "keyring"},
		{"vite", "vite listens"},
	} {
		n := policy.NeedsBeyondJail(strings.Fields(c.cmd), jProject, jProject, jHome)
		if len(n) != 1 || !strings.Contains(n[0].Why, c.why) {
			t.Errorf("%s: %+v, want one need saying %q", c.cmd, n, c.why)
		}
	}
	for _, cmd := range []string{"npm install", "git push", "sudo cp x /etc/y", "docker run x", "git commit -m x"} {
		argv := strings.Fields(cmd)
		for _, n := range policy.NeedsBeyondJail(argv, jProject, jProject, jHome) {
			if n.Why == "" || !strings.Contains(n.Why, argv[0]) && !strings.Contains(n.Why, argv[1]) {
				t.Errorf("%s: %+v: the reason does not name the program", cmd, n)
			}
		}
	}
}

// TestJailNeedsOnCorpus measures the table on the corpus of real agents'
// Bash calls (testdata/agentcmds, PowerShell ones left out, as
// bench/cmd/decisions does): every simple command of a call, wherever
// shellparse's sketch finds it (chains, pipes, subshells, substitutions),
// judged in the directory a literal cd before it moved to, the project
// being the call's logged cwd (or the directory its source's calls most
// often cd to first). Run with -v to see the counts (JAILNEEDS_LIST=1
// also logs every simple command with its needs, or NIL):
//
//	go test ./policy/ -run TestJailNeedsOnCorpus -v
func TestJailNeedsOnCorpus(t *testing.T) {
	entries, err := corpus.ReadFile(filepath.Join("..", "testdata", "agentcmds", "corpus.jsonl"))
	if err != nil {
		t.Skip(err)
	}
	roots := corpusRoots(entries)
	var calls, unparsed int
	byRight := map[string]int{}
	unlessOnly := 0 // calls whose only need is a network one that falls when a package is installed
	needing, nothing := map[string]int{}, map[string]int{}
	for _, e := range entries {
		if e.Shell != "" {
			continue
		}
		calls++
		project := e.Cwd
		if project == "" {
			project = roots[e.Source]
		}
		if project == "" {
			project = "/work/project"
		}
		home := "/home/user"
		if p := strings.Split(project, "/"); len(p) > 2 && (p[1] == "home" || p[1] == "Users") {
			home = "/" + p[1] + "/" + p[2]
		}
		sk, ok := shellparse.SketchOf(e.Cmd)
		if !ok {
			unparsed++
			continue
		}
		cwd := project
		got := map[string]bool{}
		conditional := true
		for _, argv := range sk.Calls {
			if len(argv) == 0 {
				continue
			}
			if argv[0] == "cd" {
				if len(argv) == 2 && !strings.Contains(argv[1], "$") {
					cwd = filepath.Clean(fsx.Abs(cwd, home, argv[1]))
				}
				continue
			}
			for k := range argv {
				policy.NeedsBeyondJail(argv[:k], cwd, project, home) // no panic on a truncated call
			}
			needs := policy.NeedsBeyondJail(argv, cwd, project, home)
			name := programAndSub(argv)
			if needs == nil {
				if os.Getenv("JAILNEEDS_LIST") != "" {
					t.Logf("NIL %s | %s", name, strings.Join(argv, " "))
				}
				nothing[name]++
			} else {
				needing[name]++
			}
			for _, n := range needs {
				got[n.Right] = true
				conditional = conditional && len(n.Unless) > 0
				if os.Getenv("JAILNEEDS_LIST") != "" {
					t.Logf("NEED %s | %s | %s", n.Right, n.Why, strings.Join(argv, " "))
				}
			}
		}
		for r := range got {
			byRight[r]++
		}
		if len(got) == 0 {
			byRight["nothing"]++
		} else if conditional {
			unlessOnly++
		}
	}
	t.Logf("%d calls (%d not parsed): network %d, outside %d, git %d, some need %d, nothing %d",
		calls, unparsed, byRight[policy.JailNetwork], byRight[policy.JailOutside], byRight[policy.JailGit],
		calls-unparsed-byRight["nothing"], byRight["nothing"])
	t.Logf("of those needing something, %d need only the network of an npx or bunx that falls when the package is installed", unlessOnly)
	for _, m := range []struct {
		title string
		m     map[string]int
	}{{"needing something", needing}, {"needing nothing", nothing}} {
		t.Logf("top simple commands %s:", m.title)
		for i, c := range top(m.m, 30) {
			t.Logf("  %2d. %5d  %s", i+1, c.n, c.name)
		}
	}
}

type named struct {
	name string
	n    int
}

func top(m map[string]int, k int) []named {
	var out []named
	for name, n := range m {
		out = append(out, named{name, n})
	}
	slices.SortFunc(out, func(a, b named) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.name, b.name)
	})
	return out[:min(k, len(out))]
}

// programAndSub names a simple command by its program and, for the
// programs that take one, its subcommand (the first word that is not an
// option, git's -C DIR skipped).
func programAndSub(argv []string) string {
	name := policy.Base(argv[0])
	switch name {
	case "git", "npm", "pnpm", "yarn", "bun", "npx", "bunx", "go", "cargo", "pip", "uv", "uvx", "poetry", "docker", "gh",
		"apt", "apt-get", "brew", "python", "make", "rustup", "gem", "bundle", "composer", "mvn", "gradle", "gradlew", "deno",
		"kubectl", "pipenv", "conda", "sudo", "env", "timeout", "xargs", "sh", "bash", "pre-commit", "systemctl":
	default:
		return name
	}
	for i := 1; i < len(argv); i++ {
		w := argv[i]
		if w == "-C" || w == "-c" && name == "git" || w == "-m" && name == "python" {
			if name == "python" && i+1 < len(argv) {
				return name + " -m " + argv[i+1]
			}
			i++
			continue
		}
		if strings.HasPrefix(w, "-") || w == "" {
			continue
		}
		if strings.ContainsAny(w, "$/=") || len(w) > 24 {
			break
		}
		return name + " " + w
	}
	return name
}

// corpusRoots: for each source whose log gives no cwd, the absolute
// directory its calls most often start by moving to (as
// bench/cmd/decisions finds it), when at least 3 do.
func corpusRoots(entries []corpus.Entry) map[string]string {
	counts := map[string]map[string]int{}
	for _, e := range entries {
		if e.Cwd != "" || !strings.HasPrefix(e.Cmd, "cd /") {
			continue
		}
		d, _, ok := strings.Cut(strings.TrimPrefix(e.Cmd, "cd "), "&&")
		if !ok {
			continue
		}
		d = strings.TrimRight(strings.Trim(strings.TrimSpace(d), `"`), "/")
		if strings.ContainsAny(d, " ';|") {
			continue
		}
		if counts[e.Source] == nil {
			counts[e.Source] = map[string]int{}
		}
		counts[e.Source][d]++
	}
	roots := map[string]string{}
	for src, c := range counts {
		if best := top(c, 1); len(best) == 1 && best[0].n >= 3 {
			roots[src] = best[0].name
		}
	}
	return roots
}
