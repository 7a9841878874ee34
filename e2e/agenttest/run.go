//go:build unix

package agenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/loopguard/loopguard/e2e/claudetest"
)

// RunTimeout bounds one client run (generous: a loaded machine slows the
// Node clients down a lot).
const RunTimeout = 5 * time.Minute

// Run describes one non-interactive client run.
type Run struct {
	Bin  string   // client executable, from Install
	API  *FakeAPI // the fake model API
	Home string   // HOME (Codex's config is in Home/.codex, Gemini's in Home/.gemini)
	Dir  string   // project folder, the working directory
	Env  []string // extra environment for the client and its hooks
	Args []string // extra client arguments
}

// run runs the client with args and r.Args in Dir, under RunTimeout, with
// env added to a clean environment and r.Env.
func (r Run) run(ctx context.Context, args []string, env ...string) (Result, error) {
	cmd := exec.Command(r.Bin, append(args, r.Args...)...)
	cmd.Dir = r.Dir
	cmd.Env = append(append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.Home, "TMPDIR=" + os.TempDir(), "NO_COLOR=1", "TERM=dumb"}, r.Env...), env...)
	return claudetest.RunCmd(ctx, cmd, RunTimeout)
}

// WriteCodexConfig writes Home/.codex/config.toml pointing Codex at the
// fake Responses API (a model provider of its own; the key is a dummy).
func WriteCodexConfig(home, apiURL string) error {
	dir := filepath.Join(home, ".codex")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	cfg := fmt.Sprintf(`model = "gpt-fake"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "FAKE_API_KEY"
`, apiURL+"/v1")
	return os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o600)
}

// Codex runs `codex exec` in Dir. Codex runs a user hook only once the user
// has trusted it (/hooks in the TUI writes its hash to config.toml); the
// run passes --dangerously-bypass-hook-trust, which Codex provides for
// automation, so the hooks in Home/.codex/hooks.json run.
func (r Run) Codex(ctx context.Context) (Result, error) {
	return r.run(ctx, []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", "--json", "go"},
		"CODEX_HOME="+filepath.Join(r.Home, ".codex"), "FAKE_API_KEY=dummy")
}

// WriteGeminiSettings writes Home/.gemini/settings.json choosing API-key
// authentication (the key is a dummy; the base URL is the fake API's).
func WriteGeminiSettings(home string) error {
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}}}`+"\n"), 0o600)
}

// Gemini runs `gemini -p go --yolo` in Dir (yolo: Gemini's own approval
// prompt is off, so what stops a call is the hook). The folder is trusted
// through GEMINI_CLI_TRUST_WORKSPACE: Gemini registers settings hooks only
// in trusted folders.
func (r Run) Gemini(ctx context.Context) (Result, error) {
	return r.run(ctx, []string{"-p", "go", "--yolo", "--output-format", "json"},
		"GEMINI_API_KEY=dummy", "GOOGLE_GEMINI_BASE_URL="+r.API.URL, "GEMINI_CLI_TRUST_WORKSPACE=true")
}

// GeminiAsInstalled is Gemini as a user runs it: folder trust decided by
// trustedFolders.json, not by GEMINI_CLI_TRUST_WORKSPACE.
func (r Run) GeminiAsInstalled(ctx context.Context) (Result, error) {
	return r.run(ctx, []string{"-p", "go", "--yolo", "--output-format", "json"},
		"GEMINI_API_KEY=dummy", "GOOGLE_GEMINI_BASE_URL="+r.API.URL)
}

// CopilotModel is the model Copilot is told it runs: a GPT-5 model is
// offered apply_patch, an older one view, create and edit. A test that
// sets it puts it back when it ends.
var CopilotModel = "gpt-5.4"

// Copilot runs `copilot -p go --allow-all-tools` in Dir in Copilot's offline
// mode with a custom model provider (BYOK: no GitHub sign-in), the fake
// Responses API. --allow-all-tools turns Copilot's own confirmations off,
// so what stops a call is the hook. Its hooks are read from
// Home/.copilot/hooks.
func (r Run) Copilot(ctx context.Context) (Result, error) {
	return r.run(ctx, []string{"-p", "go", "--allow-all-tools", "--no-auto-update"}, "COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL="+r.API.URL+"/v1",
		"COPILOT_PROVIDER_WIRE_API=responses", "COPILOT_MODEL="+CopilotModel, "COPILOT_PROVIDER_API_KEY=dummy",
		"COPILOT_AUTO_UPDATE=false")
}

// Qwen runs `qwen go --yolo` in Dir (yolo: Qwen Code's own approval prompt
// is off, so what stops a call is the hook) against the fake Chat
// Completions API as its OpenAI provider.
func (r Run) Qwen(ctx context.Context) (Result, error) {
	return r.run(ctx, []string{"go", "--yolo", "--output-format", "json"}, "OPENAI_API_KEY=dummy", "OPENAI_BASE_URL="+r.API.URL+"/v1", "OPENAI_MODEL=fake-model",
		"QWEN_CODE_SUPPRESS_YOLO_WARNING=1")
}

// WriteOpenCodeConfig writes Home/.config/opencode/opencode.json: a model
// provider of its own (OpenCode's bundled OpenAI-compatible one) at the
// fake API, with OpenCode's own permission prompts off (what stops a call
// is loopguard's plugin). OpenCode installs its plugin package into its
// config directory with npm before it loads plugins; seed (the package
// installed once into the cache, SeedOpenCode) is copied there first so
// that each run does not install it again.
func WriteOpenCodeConfig(home, apiURL, seed string) error {
	dir := filepath.Join(home, ".config", "opencode")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if seed != "" {
		if out, err := exec.Command("cp", "-a", seed+"/.", dir).CombinedOutput(); err != nil {
			return fmt.Errorf("failed to seed OpenCode's config dir: %w: %s", err, out)
		}
	}
	cfg := fmt.Sprintf(`{"provider":{"fake":{"npm":"@ai-sdk/openai-compatible","name":"fake","options":{"baseURL":%q,"apiKey":"dummy"},"models":{"fake-model":{"name":"fake"}}}},"model":"fake/fake-model","permission":{"bash":"allow","edit":"allow","webfetch":"allow"},"autoupdate":false,"share":"disabled"`, apiURL+"/v1")
	// The shell `init --agent opencode --ticket` wrote stays.
	var old struct {
		Shell *string `json:"shell"`
	}
	path := filepath.Join(dir, "opencode.json")
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &old) == nil && old.Shell != nil {
		sh, _ := json.Marshal(*old.Shell)
		cfg += `,"shell":` + string(sh)
	}
	return os.WriteFile(path, []byte(cfg+"}\n"), 0o600)
}

// OpenCode runs `opencode run go` in Dir with the fake model, its own
// network fetches (model list, updates, LSP downloads) off.
func (r Run) OpenCode(ctx context.Context) (Result, error) {
	return r.run(ctx, []string{"run", "go", "--model", "fake/fake-model"}, "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1")
}
