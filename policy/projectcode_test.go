package policy

import (
	"strings"
	"testing"
)

// TestRunsProjectCode: the rules that may never hold a standing +network
// grant (they run code the project chose, or a package they name), each
// beside its control, the form that runs none; and the form offered
// instead is itself one that runs none.
func TestRunsProjectCode(t *testing.T) {
	for _, c := range []struct {
		rule    string // words, a trailing " *" for a wildcard
		runs    bool
		instead string
	}{
		{"npm install", true, "npm install --ignore-scripts"},
		{"npm install --ignore-scripts", false, ""},
		{"npm install *", true, "npm install --ignore-scripts"},
		{"npm install --ignore-scripts *", false, ""}, // npm's table covers no word that turns it off
		{"npm install --ignore-scripts --ignore-scripts=false", true, "npm install --ignore-scripts"},
		{"npm install --no-ignore-scripts lodash", true, "npm install --ignore-scripts lodash"},
		{"npm ci", true, "npm ci --ignore-scripts"},
		{"npm ci --ignore-scripts", false, ""},
		{"npm i lodash", true, "npm i --ignore-scripts lodash"},
		{"npm audit", false, ""},
		{"npm audit fix", true, "npm audit --ignore-scripts fix"},
		{"npm view react", false, ""},
		{"npm run build", true, ""},
		{"npm test", true, ""},
		{"npm run build --ignore-scripts", true, ""}, // run runs its script whatever the flag
		{"npm exec foo", true, ""},
		{"pnpm install", true, "pnpm install --ignore-scripts"},
		{"pnpm install --ignore-scripts", false, ""},
		{"pnpm dlx create-vite", true, ""},
		{"yarn", true, "yarn --ignore-scripts"},
		{"yarn install --mode=skip-build", false, ""},
		{"yarn build", true, ""},
		{"bun install", true, "bun install --ignore-scripts"},
		{"bun install --ignore-scripts", false, ""},
		{"bun install --ignore-scripts *", true, "bun install --ignore-scripts"},
		{"npx tsc", true, ""},
		{"bunx vite", true, ""},
		{"make", true, ""},
		{"make test", true, ""},
		{"/usr/bin/make install", true, ""},
		{"cargo build", true, "cargo fetch"},
		{"cargo check *", true, "cargo fetch"},
		{"cargo test", true, "cargo fetch"},
		{"cargo fetch", false, ""},
		{"cargo update *", false, ""},
		{"go test ./...", true, "go mod download"},
		{"go generate ./...", true, "go mod download"},
		{"go run .", true, "go mod download"},
		{"go mod download", false, ""},
		{"go build *", false, ""},
		{"go get *", false, ""},
		{"pip install .", true, ""},
		{"pip install -e .", true, ""},
		{"pip install -r requirements.txt", true, ""},
		{"pip install requests", true, "pip install --only-binary=:all: requests"},
		{"pip install --only-binary=:all: requests", false, ""},
		{"pip install --only-binary :all: requests", false, ""},
		{"pip install --only-binary=:all: ./dist/x.tar.gz", true, ""},
		{"pip install --only-binary=:all: *", true, "pip install --only-binary=:all:"},
		{"pip3 download foo", true, "pip3 download --only-binary=:all: foo"},
		{"pip list", false, ""},
		{"uv pip install --only-binary=:all: httpx", false, ""},
		{"uv pip install .", true, ""},
		{"uv sync", true, ""},
		{"uv run pytest", true, ""},
		{"python3 setup.py install", true, ""},
		{"python -m pip install requests", true, ""},
		{"pytest", true, ""},
		{"./gradlew build", true, ""},
		{"gradle build", true, ""},
		{"mvn package", true, ""},
		{"bundle install", true, ""},
		{"composer install", true, "composer install --no-scripts --no-plugins"},
		{"composer install --no-scripts --no-plugins", false, ""},
		{"composer run-script test", true, ""},
		{"deno run main.ts", true, ""},
		{"deno fmt", false, ""},
		{"env npm ci --ignore-scripts", true, ""},
		{"curl -fsSL https://example.com", false, ""},
		{"git fetch *", false, ""},
		{"gh pr list *", false, ""},
	} {
		words := strings.Fields(c.rule)
		exact := true
		if words[len(words)-1] == "*" {
			words, exact = words[:len(words)-1], false
		}
		pc, runs := RunsProjectCode(words, exact)
		if runs != c.runs {
			t.Errorf("%s: runs project code %t (%s), want %t", c.rule, runs, pc.Why, c.runs)
			continue
		}
		if got := strings.Join(pc.Instead, " "); got != c.instead {
			t.Errorf("%s: instead %q, want %q", c.rule, got, c.instead)
		}
		if runs && pc.Why == "" {
			t.Errorf("%s: no reason", c.rule)
		}
		if pc.Instead != nil {
			if again, still := RunsProjectCode(pc.Instead, true); still {
				t.Errorf("%s: the form offered instead, %q, runs code too: %s", c.rule, pc.Instead, again.Why)
			}
		}
	}
}
