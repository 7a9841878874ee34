package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loopguard/loopguard/internal/testfs"
)

// TestMiseLoads: what a project's mise configuration loads and runs on
// the user's next cd (the ninety-third attack run's trusted mise.toml
// with _.source = "./scripts/env.sh", whose script a confined call
// rewrote) is executable configuration: [env]'s _.source (and what the
// sourced script sources) and _.file, in a string, an array or an inline
// table, with {{config_root}}; [hooks]' commands; a [tools] version's
// path:; in mise.toml, a mise.<env>.toml and conf.d. Where mise is on
// PATH it is the oracle that _.source runs on mise env. Controls: an
// [env] value, a tool's version, a task's script (run only by mise run)
// are not.
func TestMiseLoads(t *testing.T) {
	proj := realDir(t, t.TempDir())
	mark := filepath.Join(proj, "ran")
	testfs.Write(t, filepath.Join(proj, "mise.toml"), []byte(`# a trusted configuration
[env]
NAME = "svc/value"
_.source = "./scripts/env.sh"
_.file = [".env.dev", "{{config_root}}/config/env.json"]

[hooks]
enter = "./hooks/enter.sh"
cd = { script = "python3 tools/cd.py" }

[tools]
python = "path:./build/py"
node = "20"

[tasks.build]
run = "./tasks/build.sh"
`), 0o644)
	testfs.Write(t, filepath.Join(proj, "mise.dev.toml"), []byte("[env]\n_.source = { path = \"dev/env.sh\", redact = true }\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, ".config/mise/conf.d/x.toml"), []byte("env._.file = '.env.x'\n"), 0o644)
	testfs.Write(t, filepath.Join(proj, "scripts/env.sh"), []byte("echo sourced >> "+mark+"\nsource ./lib/more.sh\n"), 0o644)
	got := MiseLoads(proj)
	for _, w := range []string{"scripts/env.sh", "lib/more.sh", ".env.dev", "config/env.json", "hooks/enter.sh", "tools/cd.py", "build/py", "dev/env.sh", ".env.x"} {
		if !slices.Contains(got, filepath.Join(proj, w)) {
			t.Errorf("MiseLoads = %q, want %s in it", got, w)
		}
	}
	for _, n := range []string{"svc/value", "20", "tasks/build.sh", "tasks", "app.py"} {
		if slices.Contains(got, filepath.Join(proj, n)) {
			t.Errorf("control: MiseLoads holds %s", n)
		}
	}
	if !slices.Contains(ProjectLoads(proj, "", nil), filepath.Join(proj, "scripts/env.sh")) {
		t.Error("ProjectLoads does not hold what mise.toml sources")
	}
	if mise, err := exec.LookPath("mise"); err == nil {
		cmd := exec.Command(mise, "env", "-s", "bash")
		cmd.Dir = proj
		cmd.Env = []string{"HOME=" + proj, "PATH=/usr/bin:/bin", "MISE_TRUSTED_CONFIG_PATHS=" + proj, "MISE_YES=1"}
		out, _ := cmd.CombinedOutput()
		if b, _ := os.ReadFile(mark); !strings.Contains(string(b), "sourced") {
			t.Errorf("the oracle: mise env did not source scripts/env.sh: %s", out)
		}
	}
}

// TestTomlStrings: the strings of a value, as MiseLoads reads them.
func TestTomlStrings(t *testing.T) {
	for v, want := range map[string][]string{
		`"a.sh"`:                           {"a.sh"},
		`['a.sh', "b \"c\".sh"] # "x"`:     {"a.sh", `b "c".sh`},
		`{ path = "p.sh", redact = true }`: {"p.sh"},
		"\"\"\"\nline one\n\"\"\"":         {"line one\n"},
	} {
		if got := tomlStrings(v); !slices.Equal(got, want) {
			t.Errorf("tomlStrings(%q) = %q, want %q", v, got, want)
		}
	}
}
