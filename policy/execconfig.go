package policy

import (
	"path/filepath"
	"strings"
	"sync"
)

// Anchor is where an executable-configuration entry is found.
type Anchor uint8

const (
	// AnyDepth entries are executable configuration in every directory: a
	// project, a nested project, a vendored tree, the home directory.
	// Agents load a nested project's files, and a human's shell, git or
	// package manager reads them wherever they run.
	AnyDepth Anchor = iota
	// InHome entries are executable configuration at that path under the
	// home directory only.
	InHome
)

// ExecConfigEntry is one kind of executable configuration: a file or
// directory that makes an agent, the shell, git, an editor or a package
// manager start a program later, as its document says. No scoped grant
// covers it; a call that writes it needs an exact approval, shown with a
// loud warning.
type ExecConfigEntry struct {
	// Path is "/"-separated: one name (".npmrc") or a path of names
	// (".cursor/mcp.json"). A directory covers everything inside it.
	Path   string
	Anchor Anchor
	// Agent names the coding agent whose configuration it is ("" for the
	// shell and the other tools).
	Agent string
	// What says for a person what it is and what it runs.
	What string
	// Doc is the document that says it runs code.
	Doc string
}

// execConfig is the one list of executable configuration. Claude Code's
// .claude directory and git's .git directory are listed too, but judged
// by their own rules (claudeRules, gitRules): part of each is
// guard-critical. Other agents' hook registrations (agentFiles) are
// guard-critical, a tier above. Names that start with no dot are matched
// only as whole names: a scope's bare "*" or "*.toml" still works, and
// simply never covers one (Classify judges the concrete path).
//
// It is built on first use (sync.OnceValue), as is anyDepthIndex (which
// reads execConfigRows and lefthookRows itself): a hook call that never
// classifies a path by name does not pay for it at start-up.
var execConfig = sync.OnceValue(func() []ExecConfigEntry { return append(execConfigRows, lefthookRows...) })

var execConfigRows = []ExecConfigEntry{
	// Claude Code.
	{".claude", AnyDepth, "claude", "Claude Code's project configuration (skills, commands, agents, hook scripts; its settings are guard-critical)",
		"https://code.claude.com/docs/en/settings, https://code.claude.com/docs/en/hooks"},
	{".mcp.json", AnyDepth, "claude", "an MCP server list (.mcp.json: each server is a command Claude Code and Copilot CLI run)",
		"https://code.claude.com/docs/en/mcp (project scope)"},

	// Cursor.
	{".cursor/mcp.json", AnyDepth, "cursor", "Cursor's MCP server list (.cursor/mcp.json: each stdio server is a command Cursor starts)",
		"https://cursor.com/docs/mcp"},
	{".cursor/worktrees.json", AnyDepth, "cursor", "Cursor's worktree setup (.cursor/worktrees.json: setup-worktree commands run when Cursor makes a worktree)",
		"https://cursor.com/docs/configuration/worktrees"},
	{".cursor/environment.json", AnyDepth, "cursor", "Cursor's agent environment (.cursor/environment.json: install and start commands, terminals)",
		"https://cursor.com/docs/cloud-agent"},

	// Gemini CLI (its settings.json and extensions are guard-critical).
	{".gemini/commands", AnyDepth, "gemini", "Gemini CLI custom commands (.gemini/commands: !{...} in a command runs a shell command)",
		"https://geminicli.com/docs/cli/custom-commands"},
	{".gemini/.env", AnyDepth, "gemini", "Gemini CLI's environment file (.gemini/.env: loaded into Gemini CLI, whose variables choose its sandbox and settings files)",
		"https://geminicli.com/docs/get-started/configuration (Environment variables and .env files)"},
	{".gemini/sandbox.Dockerfile", AnyDepth, "gemini", "Gemini CLI's sandbox image (.gemini/sandbox.Dockerfile: built, RUN lines and all, when BUILD_SANDBOX is set)",
		"https://geminicli.com/docs/cli/sandbox (custom sandbox)"},

	// Copilot CLI (its hooks and settings are guard-critical).
	{".github/agents", AnyDepth, "copilot", "Copilot custom agents (.github/agents: an agent profile's mcp-servers are commands Copilot starts)",
		"https://docs.github.com/en/copilot/reference/custom-agents-configuration"},
	{".github/lsp.json", AnyDepth, "copilot", "Copilot CLI's LSP servers (.github/lsp.json: each server's command is a program Copilot starts)",
		"https://docs.github.com/en/copilot/how-tos/copilot-cli/set-up-copilot-cli/add-lsp-servers"},
	{"lsp.json", AnyDepth, "copilot", "Copilot CLI's LSP servers (lsp.json at a repository's top: each server's command is a program Copilot starts)",
		"https://docs.github.com/en/copilot/how-tos/copilot-cli/set-up-copilot-cli/add-lsp-servers"},
	{".github/skills", AnyDepth, "copilot", "Copilot project skills (.github/skills: instructions and the scripts they name, which the next session loads)",
		"https://docs.github.com/en/copilot/concepts/agents/about-agent-skills"},
	{".agents/skills", AnyDepth, "", "agent skills (.agents/skills: instructions and the scripts they name, which Copilot and other agents load)",
		"https://docs.github.com/en/copilot/concepts/agents/about-agent-skills"},
	{".copilot/mcp-config.json", AnyDepth, "copilot", "Copilot CLI's MCP server list (~/.copilot/mcp-config.json: each local server is a command)",
		"https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/add-mcp-servers"},
	{".copilot/agents", AnyDepth, "copilot", "Copilot CLI user agents (~/.copilot/agents: an agent profile's mcp-servers are commands)",
		"https://docs.github.com/en/copilot/how-tos/copilot-cli/use-copilot-cli/invoke-custom-agents"},

	// Codex's hooks and config.toml (mcp_servers, notify) are guard-critical
	// (agentFiles); its AGENTS.md is an instruction file (below); its
	// prompts run nothing.

	// git.
	{".git", AnyDepth, "", "git's directory (its config and hooks run commands)", "git-config(1) core.hooksPath, alias.*, filter.*; githooks(5)"},
	{".gitconfig", AnyDepth, "", "git configuration (.gitconfig: aliases, filters, hooks path run commands)", "git-config(1) FILES, alias.*, core.sshCommand, filter.<driver>.clean"},
	{".gitmodules", AnyDepth, "", "git submodule configuration (.gitmodules: submodule.<name>.update = !command)", "gitmodules(5), git-submodule(1) update --checkout/!command"},
	{".config/git", InHome, "", "git's user configuration (aliases, hooks path, filters run commands)", "git-config(1) FILES ($XDG_CONFIG_HOME/git/config)"},
	{".hg", AnyDepth, "", "Mercurial's directory (.hg/hgrc: hooks, aliases and the pager run commands)", "hgrc(5) [hooks], [alias], [pager]"},
	{".jj", AnyDepth, "", "Jujutsu's directory (.jj/repo/config.toml: ui.pager, ui.diff-editor and aliases run commands)",
		"https://jj-vcs.github.io/jj/latest/config/"},

	// Package managers and toolchains.
	{".npmrc", AnyDepth, "", "npm configuration (.npmrc: script-shell, node-options and git name programs npm runs)",
		"https://docs.npmjs.com/cli/v10/configuring-npm/npmrc, https://docs.npmjs.com/cli/v10/using-npm/config#script-shell"},
	{".yarnrc.yml", AnyDepth, "", "Yarn configuration (.yarnrc.yml: yarnPath is the JavaScript file run as yarn)", "https://yarnpkg.com/configuration/yarnrc#yarnPath"},
	{".corepack.env", AnyDepth, "", "Corepack's environment file (.corepack.env beside a package.json: COREPACK_HOME there makes yarn and pnpm run the JavaScript of that directory, and other keys turn its integrity checks off; the eighty-third attack run's ran on the user's next yarn --version)",
		"https://github.com/nodejs/corepack#environment-variables"},
	{".poetry", AnyDepth, "", "Poetry's project plugins (.poetry/plugins: put first on sys.path and loaded by every poetry command)",
		"https://python-poetry.org/docs/plugins/#project-plugins"},
	{".yarnrc", AnyDepth, "", "Yarn 1 configuration (.yarnrc: yarn-path is the file run as yarn)", "https://classic.yarnpkg.com/en/docs/yarnrc#toc-yarn-path"},
	{".pnpmfile.cjs", AnyDepth, "", "pnpm hooks (.pnpmfile.cjs: run by pnpm install)", "https://pnpm.io/pnpmfile"},
	{"bunfig.toml", AnyDepth, "", "Bun configuration (bunfig.toml: preload scripts run before bun run and bun test)", "https://bun.sh/docs/runtime/bunfig#preload"},
	{".cargo/config.toml", AnyDepth, "", "Cargo configuration (.cargo/config.toml, read in every parent directory: build.rustc-wrapper, target runner, aliases)",
		"https://doc.rust-lang.org/cargo/reference/config.html"},
	{".cargo/config", AnyDepth, "", "Cargo configuration (.cargo/config, the old name of config.toml)", "https://doc.rust-lang.org/cargo/reference/config.html"},
	{"rust-toolchain.toml", AnyDepth, "", "rustup's toolchain file (rust-toolchain.toml: path names a local toolchain whose cargo and rustc every cargo command runs)",
		"https://rust-lang.github.io/rustup/overrides.html#path"},
	{"rust-toolchain", AnyDepth, "", "rustup's toolchain file (rust-toolchain, the old name of rust-toolchain.toml)",
		"https://rust-lang.github.io/rustup/overrides.html#the-toolchain-file"},
	{"mise.toml", AnyDepth, "", "mise configuration (mise.toml: hooks, env _.source and templates run when a shell with mise enters the directory; trust is by path)",
		"https://mise.jdx.dev/configuration.html, https://mise.jdx.dev/hooks.html, https://mise.jdx.dev/cli/trust.html"},
	{".mise.toml", AnyDepth, "", "mise configuration (.mise.toml, as mise.toml)", "https://mise.jdx.dev/configuration.html"},
	{"mise.local.toml", AnyDepth, "", "mise configuration (mise.local.toml, as mise.toml)", "https://mise.jdx.dev/configuration.html"},
	{".mise.local.toml", AnyDepth, "", "mise configuration (.mise.local.toml, as mise.toml)", "https://mise.jdx.dev/configuration.html"},
	{".mise", AnyDepth, "", "mise configuration (.mise/config.toml, as mise.toml)", "https://mise.jdx.dev/configuration.html"},
	{".config/mise", AnyDepth, "", "mise configuration (.config/mise/config.toml, as mise.toml)", "https://mise.jdx.dev/configuration.html"},
	{".config/mise.toml", AnyDepth, "", "mise configuration (.config/mise.toml, as mise.toml)", "https://mise.jdx.dev/configuration.html"},
	{"mise/config.toml", AnyDepth, "", "mise configuration (mise/config.toml, as mise.toml)", "https://mise.jdx.dev/configuration.html"},
	{"mise/conf.d", AnyDepth, "", "mise configuration (mise/conf.d/*.toml, as mise.toml)", "https://mise.jdx.dev/configuration.html"},
	{".tool-versions", AnyDepth, "", "asdf's and mise's tool versions (.tool-versions: a path: version runs that directory's programs through the shims)",
		"https://asdf-vm.com/manage/configuration.html#tool-versions"},
	{".config/go/env", InHome, "", "the go command's environment file (go env -w: GOFLAGS=-toolexec, CC, GOTOOLCHAIN name programs go runs)",
		"https://pkg.go.dev/cmd/go#hdr-Environment_variables (GOENV)"},
	{".config/pip", InHome, "", "pip's user configuration (index-url, find-links: where pip fetches the code it installs and runs)",
		"https://pip.pypa.io/en/stable/topics/configuration/"},
	{".pip", InHome, "", "pip's legacy user configuration (index-url, find-links)", "https://pip.pypa.io/en/stable/topics/configuration/"},
	// A Python environment's own (site) configuration: pip reads
	// $VIRTUAL_ENV/pip.conf (pip.ini on Windows). At any depth, not only
	// beside a pyvenv.cfg: one written first is read once an environment
	// is made there (python -m venv keeps it). The ninety-third attack
	// run's .venv/pip.conf named a local sdist as requests, and the
	// user's .venv/bin/pip install requests ran its setup.py.
	{"pip.conf", AnyDepth, "", "pip's configuration in a Python environment (pip.conf: $VIRTUAL_ENV/pip.conf's find-links and index-url choose the code pip installs and runs)",
		"https://pip.pypa.io/en/stable/topics/configuration/#location (Site)"},
	{"pip.ini", AnyDepth, "", "pip's configuration in a Python environment (pip.ini, pip.conf's name on Windows)",
		"https://pip.pypa.io/en/stable/topics/configuration/#location (Site)"},
	// The other Python installers' project files (the ninety-sixth attack
	// run's jailed call wrote each): read by the tool the user runs
	// unconfined in that directory or below it, they name the
	// interpreter it runs or the index it installs (and so runs) code
	// from, as pip.conf does.
	{"uv.toml", AnyDepth, "", "uv configuration (uv.toml, read in the current directory or the nearest parent: index-url, find-links and [[index]] choose the code uv installs and runs, python-install-mirror the Python it downloads and runs)",
		"https://docs.astral.sh/uv/concepts/configuration-files/, https://docs.astral.sh/uv/reference/settings/#find-links"},
	{".config/uv", InHome, "", "uv's user configuration (~/.config/uv/uv.toml: index-url, find-links, python-install-mirror, read by every uv command, uv tool too)",
		"https://docs.astral.sh/uv/concepts/configuration-files/"},
	{".pdm-python", AnyDepth, "", "PDM's saved interpreter (.pdm-python: the path of the Python every pdm command of the project runs, pdm install and pdm run among them)",
		"https://pdm-project.org/en/latest/usage/project/#choose-a-python-interpreter"},
	{"pdm.toml", AnyDepth, "", "PDM's project configuration (pdm.toml: python.path is the interpreter pdm runs, pypi.url the index whose code it installs)",
		"https://pdm-project.org/latest/usage/config/, https://pdm-project.org/latest/reference/configuration/"},
	{"poetry.toml", AnyDepth, "", "Poetry's project configuration (poetry.toml: virtualenvs.path and virtualenvs.in-project choose the environment whose Python poetry install and poetry run run, python.installation-dir where it finds the Pythons it makes environments with)",
		"https://python-poetry.org/docs/configuration/#local-configuration, https://python-poetry.org/docs/configuration/#virtualenvspath, https://python-poetry.org/docs/configuration/#pythoninstallation-dir"},

	// Environment files that tools load into the processes they start:
	// BASH_ENV, LD_PRELOAD or NODE_OPTIONS there run code (the forty-fifth
	// attack run's src/app/.env, which direnv with load_dotenv loaded
	// into the user's shell on cd).
	{".env", AnyDepth, "", "an environment file (.env: direnv with load_dotenv, Bun and pipenv load it into the programs they start)", envDoc},
	{".env.local", AnyDepth, "", "an environment file (.env.local: Bun loads it into the programs it starts)", bunEnvDoc},
	{".env.development", AnyDepth, "", "an environment file (.env.development: Bun loads it into the programs it starts)", bunEnvDoc},
	{".env.production", AnyDepth, "", "an environment file (.env.production: Bun loads it into the programs it starts)", bunEnvDoc},
	{".env.test", AnyDepth, "", "an environment file (.env.test: Bun loads it into the programs it starts)", bunEnvDoc},
	{".env.development.local", AnyDepth, "", "an environment file (.env.development.local: Bun loads it into the programs it starts)", bunEnvDoc},
	{".env.production.local", AnyDepth, "", "an environment file (.env.production.local: Bun loads it into the programs it starts)", bunEnvDoc},
	{".env.test.local", AnyDepth, "", "an environment file (.env.test.local: Bun loads it into the programs it starts)", bunEnvDoc},
	{".flaskenv", AnyDepth, "", "Flask's environment file (.flaskenv: the flask command loads it into its process and the reloader's)",
		"https://flask.palletsprojects.com/en/stable/cli/#environment-variables-from-dotenv"},

	// direnv.
	{".envrc", AnyDepth, "", "a direnv file (.envrc: run by the shell on cd)", "direnv(1), https://direnv.net/"},
	{".config/direnv", InHome, "", "direnv's configuration (direnvrc is sourced before every .envrc)", "direnv(1) FILES, direnv.toml(1)"},
	{".direnvrc", InHome, "", "direnv's user library (sourced before every .envrc)", "direnv(1) FILES"},

	// Editors and their task files.
	{".vscode", AnyDepth, "", "editor configuration (.vscode: tasks.json and launch.json run commands; VS Code and Copilot read mcp.json)",
		"https://code.visualstudio.com/docs/debugtest/tasks, https://code.visualstudio.com/docs/copilot/customization/mcp-servers"},
	{".idea", AnyDepth, "", "editor configuration (.idea: run configurations run commands)", "https://www.jetbrains.com/help/idea/run-debug-configuration.html"},
	{".zed", AnyDepth, "", "Zed's project configuration (.zed/tasks.json runs commands; settings.json names language servers)", "https://zed.dev/docs/tasks"},
	{".helix", AnyDepth, "", "Helix's workspace configuration (.helix/languages.toml names language-server commands)", "https://docs.helix-editor.com/languages.html"},
	{".devcontainer", AnyDepth, "", "a dev container definition (postCreateCommand and friends run when the container is made)",
		"https://containers.dev/implementors/json_reference/#lifecycle-scripts"},
	{".devcontainer.json", AnyDepth, "", "a dev container definition (postCreateCommand and friends run when the container is made)",
		"https://containers.dev/implementors/json_reference/#lifecycle-scripts"},
	{".exrc", AnyDepth, "", "a vi/Neovim local init file (run when 'exrc' is set)", "https://neovim.io/doc/user/options.html#'exrc'"},
	{".nvimrc", AnyDepth, "", "a Neovim local init file (run when 'exrc' is set)", "https://neovim.io/doc/user/options.html#'exrc'"},
	{".nvim.lua", AnyDepth, "", "a Neovim local init file (run when 'exrc' is set)", "https://neovim.io/doc/user/options.html#'exrc'"},
	{".vimrc", AnyDepth, "", "a Vim start-up file (its commands run at start)", "vim(1) FILES, :help vimrc"},
	{".config/nvim", InHome, "", "Neovim's user configuration (init.lua runs at start)", "https://neovim.io/doc/user/starting.html#config"},
	{".ripgreprc", AnyDepth, "", "ripgrep configuration (.ripgreprc: --pre runs a command on every file)", "rg(1) CONFIGURATION FILES, --pre"},

	// Shells (start-up files of bash, zsh, sh, ksh, csh, fish) and sessions.
	{".bashrc", AnyDepth, "", "a shell start-up file", "bash(1) INVOCATION"},
	{".bash_profile", AnyDepth, "", "a shell start-up file", "bash(1) INVOCATION"},
	{".bash_login", AnyDepth, "", "a shell start-up file", "bash(1) INVOCATION"},
	{".bash_logout", AnyDepth, "", "a shell start-up file", "bash(1) INVOCATION"},
	{".bash_aliases", AnyDepth, "", "a shell start-up file (.bash_aliases: sourced by the default ~/.bashrc)", "Debian's /etc/skel/.bashrc, bash(1) INVOCATION"},
	{".profile", AnyDepth, "", "a shell start-up file", "bash(1) INVOCATION, dash(1) Invocation"},
	{".zshrc", AnyDepth, "", "a shell start-up file", "zsh(1) STARTUP/SHUTDOWN FILES"},
	{".zshenv", AnyDepth, "", "a shell start-up file", "zsh(1) STARTUP/SHUTDOWN FILES"},
	{".zprofile", AnyDepth, "", "a shell start-up file", "zsh(1) STARTUP/SHUTDOWN FILES"},
	{".zlogin", AnyDepth, "", "a shell start-up file", "zsh(1) STARTUP/SHUTDOWN FILES"},
	{".zlogout", AnyDepth, "", "a shell start-up file", "zsh(1) STARTUP/SHUTDOWN FILES"},
	{".kshrc", AnyDepth, "", "a shell start-up file", "ksh(1) (ENV)"},
	{".mkshrc", AnyDepth, "", "a shell start-up file", "mksh(1) FILES"},
	{".cshrc", AnyDepth, "", "a shell start-up file", "csh(1), tcsh(1) Startup and shutdown"},
	{".tcshrc", AnyDepth, "", "a shell start-up file", "tcsh(1) Startup and shutdown"},
	{".login", AnyDepth, "", "a shell start-up file", "csh(1), tcsh(1) Startup and shutdown"},
	{".logout", AnyDepth, "", "a shell start-up file", "csh(1), tcsh(1) Startup and shutdown"},
	{".config/fish", InHome, "", "a shell start-up file (fish's config.fish, conf.d, functions)", "https://fishshell.com/docs/current/language.html#configuration"},
	{".xprofile", InHome, "", "a session start-up file (sourced at graphical login)", "https://wiki.archlinux.org/title/Xprofile"},
	{".xsessionrc", InHome, "", "a session start-up file (sourced by Xsession)", "Xsession(5)"},
	{".xsession", InHome, "", "a session start-up file (run as the X session)", "Xsession(5)"},
	{".xinitrc", InHome, "", "a session start-up file (run by startx)", "startx(1), xinit(1)"},
	{".config/autostart", InHome, "", "session autostart entries (run at login)", "https://specifications.freedesktop.org/autostart-spec/latest/"},
	{".config/systemd/user", InHome, "", "user services (run by systemd)", "systemd.unit(5) user unit search path"},
	{".config/environment.d", InHome, "", "the user manager's environment (LD_PRELOAD, PATH for every user service)", "environment.d(5)"},
	{".ssh", InHome, "", "ssh's configuration and keys (ProxyCommand, LocalCommand run commands; authorized_keys lets in)", "ssh_config(5) ProxyCommand, sshd(8) AUTHORIZED_KEYS"},

	// Debuggers, interpreters, linters and build tools that run a
	// start-up file from the directory they run in (the thirty-first
	// attack run's list; aider's is an agent's).
	{".gdbinit", AnyDepth, "", "a gdb init file (its commands run, shell included)", "gdb(1), https://sourceware.org/gdb/current/onlinedocs/gdb.html/Startup.html"},
	{".pdbrc", AnyDepth, "", "a pdb start-up file (.pdbrc in the current directory: run as typed at the debugger, ! statements included)",
		"https://docs.python.org/3/library/pdb.html#debugger-commands"},
	{".pylintrc", AnyDepth, "", "pylint configuration (.pylintrc: init-hook is Python pylint runs)",
		"https://pylint.readthedocs.io/en/stable/user_guide/configuration/all-options.html#init-hook"},
	{"pylintrc", AnyDepth, "", "pylint configuration (pylintrc: init-hook is Python pylint runs)",
		"https://pylint.readthedocs.io/en/stable/user_guide/configuration/all-options.html#init-hook"},
	{"pylintrc.toml", AnyDepth, "", "pylint configuration (pylintrc.toml: init-hook is Python pylint runs)",
		"https://pylint.readthedocs.io/en/stable/user_guide/usage/run.html#command-line-options, https://pylint.readthedocs.io/en/stable/user_guide/configuration/all-options.html#init-hook"},
	{".pylintrc.toml", AnyDepth, "", "pylint configuration (.pylintrc.toml: init-hook is Python pylint runs)",
		"https://pylint.readthedocs.io/en/stable/user_guide/usage/run.html#command-line-options, https://pylint.readthedocs.io/en/stable/user_guide/configuration/all-options.html#init-hook"},
	{".Rprofile", AnyDepth, "", "an R start-up file (.Rprofile in the current directory: sourced when R starts)",
		"https://stat.ethz.ch/R-manual/R-devel/library/base/html/Startup.html"},
	{".Renviron", AnyDepth, "", "R's environment file (.Renviron in the current directory: R_PROFILE_USER there names the file R sources at start)",
		"https://stat.ethz.ch/R-manual/R-devel/library/base/html/Startup.html"},
	{"readline.py", AnyDepth, "", "a module interactive Python imports at start (readline.py in the current directory: python puts it first on sys.path, and its start-up hook imports readline)",
		"https://docs.python.org/3/library/site.html#rlcompleter-config, https://docs.python.org/3/library/sys.html#sys.path"},
	{"rlcompleter.py", AnyDepth, "", "a module interactive Python imports at start (rlcompleter.py in the current directory, as readline.py)",
		"https://docs.python.org/3/library/site.html#rlcompleter-config, https://docs.python.org/3/library/sys.html#sys.path"},
	{"storemagic.py", AnyDepth, "", "a module IPython imports at start (storemagic.py in the current directory: IPython loads its default extension storemagic as a top-level module first, and the current directory is first on sys.path; the eighty-third attack run's ran in plain ipython)",
		"https://ipython.readthedocs.io/en/stable/config/extensions/storemagic.html, https://ipython.readthedocs.io/en/stable/config/extensions/index.html"},
	{"storemagic", AnyDepth, "", "a package IPython imports at start (storemagic/ in the current directory, as storemagic.py)",
		"https://ipython.readthedocs.io/en/stable/config/extensions/storemagic.html"},
	{".irbrc", AnyDepth, "", "an IRB start-up file (.irbrc in the current directory: Ruby run when irb starts)",
		"https://ruby.github.io/irb/#label-Configuration+File"},
	{".pryrc", AnyDepth, "", "a Pry start-up file (.pryrc in the current directory: Ruby run when pry starts)",
		"https://github.com/pry/pry/wiki/Pry-rc"},
	{".bazelrc", AnyDepth, "", "Bazel's workspace options (.bazelrc: --workspace_status_command and --run_under name programs every build runs)",
		"https://bazel.build/run/bazelrc, https://bazel.build/docs/user-manual#workspace-status-command"},
	{".aider.conf.yml", AnyDepth, "", "aider's configuration (.aider.conf.yml: lint-cmd and test-cmd are commands aider runs after its edits)",
		"https://aider.chat/docs/config/aider_conf.html"},
	{".bazelversion", AnyDepth, "", "Bazelisk's version file (.bazelversion: a FORK/VERSION names the fork whose Bazel bazelisk downloads and runs)",
		"https://github.com/bazelbuild/bazelisk#how-does-bazelisk-know-which-bazel-version-to-run"},
	{".mvn", AnyDepth, "", "Maven's project configuration (.mvn/extensions.xml: extensions Maven runs; .mvn/jvm.config: the JVM's options, -javaagent among them; .mvn/wrapper: what ./mvnw downloads and runs)",
		"https://maven.apache.org/configure.html, https://maven.apache.org/wrapper/"},
	{".jvmopts", AnyDepth, "", "sbt's JVM options (.jvmopts: -javaagent runs a jar at every start)", sbtDoc},
	{".sbtopts", AnyDepth, "", "sbt's options (.sbtopts: JVM options, -javaagent among them, at every start)", sbtDoc},
	{"pnpm-workspace.yaml", AnyDepth, "", "pnpm's workspace settings (pnpm-workspace.yaml: pnpmfile names the hooks pnpm install runs; onlyBuiltDependencies, whose install scripts run)",
		"https://pnpm.io/settings#pnpmfile, https://pnpm.io/settings#onlybuiltdependencies"},
	{".tmux.conf", InHome, "", "tmux configuration (run-shell, if-shell run commands)", "tmux(1) run-shell"},

	// Git hook managers: each keeps in the working tree the hooks, or the
	// commands, that the human's own git runs on commit, push, checkout.
	// The directory core.hooksPath names, whatever it is called, is
	// Places.HooksPaths (HooksPaths reads it from git's configuration).
	{".husky", AnyDepth, "", "husky's hook directory (.husky: git runs its scripts through core.hooksPath)",
		"https://typicode.github.io/husky/get-started.html, git-config(1) core.hooksPath"},
	{".githooks", AnyDepth, "", "a git hook directory (.githooks: the usual name for the directory core.hooksPath names)",
		"git-config(1) core.hooksPath, githooks(5)"},
	{".git-hooks", AnyDepth, "", "overcommit's hook plugins (.git-hooks: its plugin_directory, Ruby run by the hooks)",
		"https://github.com/sds/overcommit#plugin-directory"},
	{".overcommit.yml", AnyDepth, "", "overcommit configuration (.overcommit.yml: a hook's command runs on commit)",
		"https://github.com/sds/overcommit#configuration"},
	{".pre-commit-config.yaml", AnyDepth, "", "pre-commit configuration (repo: local hooks' entry runs a command, language: system)",
		"https://pre-commit.com/#repository-local-hooks"},
	{".pre-commit-config.yml", AnyDepth, "", "pre-commit configuration (prek reads this name: repo: local hooks' entry runs a command)",
		"https://prek.j178.dev/configuration/, https://pre-commit.com/#repository-local-hooks"},
	{"prek.toml", AnyDepth, "", "prek configuration (prek.toml: repo = \"local\" hooks' entry runs a command)",
		"https://prek.j178.dev/configuration/"},
	{".simple-git-hooks.json", AnyDepth, "", "simple-git-hooks configuration (each hook is a command)", simpleGitHooksDoc},
	{"simple-git-hooks.json", AnyDepth, "", "simple-git-hooks configuration (each hook is a command)", simpleGitHooksDoc},
	{".simple-git-hooks.js", AnyDepth, "", "simple-git-hooks configuration (JavaScript run by it; each hook is a command)", simpleGitHooksDoc},
	{"simple-git-hooks.js", AnyDepth, "", "simple-git-hooks configuration (JavaScript run by it; each hook is a command)", simpleGitHooksDoc},
	{".simple-git-hooks.cjs", AnyDepth, "", "simple-git-hooks configuration (JavaScript run by it; each hook is a command)", simpleGitHooksDoc},
	{"simple-git-hooks.cjs", AnyDepth, "", "simple-git-hooks configuration (JavaScript run by it; each hook is a command)", simpleGitHooksDoc},
	{".simple-git-hooks.mjs", AnyDepth, "", "simple-git-hooks configuration (JavaScript run by it; each hook is a command)", simpleGitHooksDoc},
	{"simple-git-hooks.mjs", AnyDepth, "", "simple-git-hooks configuration (JavaScript run by it; each hook is a command)", simpleGitHooksDoc},
	{".lintstagedrc", AnyDepth, "", "lint-staged configuration (.lintstagedrc: each pattern's commands run on the staged files at a commit; the nearest one to a file is used)", lintStagedDoc},
	{".lintstagedrc.json", AnyDepth, "", "lint-staged configuration (.lintstagedrc.json: each pattern's commands run on the staged files at a commit; the nearest one to a file is used)", lintStagedDoc},
	{".lintstagedrc.yaml", AnyDepth, "", "lint-staged configuration (.lintstagedrc.yaml: each pattern's commands run on the staged files at a commit; the nearest one to a file is used)", lintStagedDoc},
	{".lintstagedrc.yml", AnyDepth, "", "lint-staged configuration (.lintstagedrc.yml: each pattern's commands run on the staged files at a commit; the nearest one to a file is used)", lintStagedDoc},
	{".lintstagedrc.mjs", AnyDepth, "", "lint-staged configuration (.lintstagedrc.mjs: each pattern's commands run on the staged files at a commit; the nearest one to a file is used)", lintStagedDoc},
	{".lintstagedrc.cjs", AnyDepth, "", "lint-staged configuration (.lintstagedrc.cjs: each pattern's commands run on the staged files at a commit; the nearest one to a file is used)", lintStagedDoc},
	{".lintstagedrc.js", AnyDepth, "", "lint-staged configuration (.lintstagedrc.js: each pattern's commands run on the staged files at a commit; the nearest one to a file is used)", lintStagedDoc},
	{"lint-staged.config.js", AnyDepth, "", "lint-staged configuration (lint-staged.config.js: each pattern's commands run on the staged files at a commit; the nearest one to a file is used)", lintStagedDoc},
	{"lint-staged.config.mjs", AnyDepth, "", "lint-staged configuration (lint-staged.config.mjs: each pattern's commands run on the staged files at a commit; the nearest one to a file is used)", lintStagedDoc},
	{"lint-staged.config.cjs", AnyDepth, "", "lint-staged configuration (lint-staged.config.cjs: each pattern's commands run on the staged files at a commit; the nearest one to a file is used)", lintStagedDoc},
	{"lint-staged.config.ts", AnyDepth, "", "lint-staged configuration (lint-staged.config.ts: each pattern's commands run on the staged files at a commit; the nearest one to a file is used)", lintStagedDoc},
	{".lefthook", AnyDepth, "", "lefthook's script directory (.lefthook: source_dir, scripts its hooks run)",
		"https://lefthook.dev/configuration/source_dir.html"},
	{".lefthook-local", AnyDepth, "", "lefthook's local script directory (.lefthook-local: source_dir_local, scripts its hooks run)",
		"https://lefthook.dev/configuration/source_dir_local.html"},

	// Instructions the next session of an agent loads: they run nothing,
	// they steer the agent (a prompt injection written there persists).
	// No scope covers them and confined code cannot write them; reading
	// them is not restricted, and an exact approval still writes them.
	{"CLAUDE.md", AnyDepth, "claude", "instructions the next session of Claude Code loads (CLAUDE.md)",
		"https://code.claude.com/docs/en/memory"},
	{"CLAUDE.local.md", AnyDepth, "claude", "instructions the next session of Claude Code loads (CLAUDE.local.md)",
		"https://code.claude.com/docs/en/memory"},
	{"AGENTS.md", AnyDepth, "codex", "instructions the next session of Codex, Copilot, Cursor, Qwen Code, OpenCode and others loads (AGENTS.md)",
		"https://agents.md/, https://developers.openai.com/codex/guides/agents-md"},
	{"AGENTS.override.md", AnyDepth, "codex", "instructions the next session of Codex loads (AGENTS.override.md, read before AGENTS.md)",
		"https://developers.openai.com/codex/guides/agents-md"},
	{"AGENT.md", AnyDepth, "", "instructions the next session of Amp loads (AGENT.md, the older name of AGENTS.md)",
		"https://ampcode.com/manual#AGENTS.md"},
	{"GEMINI.md", AnyDepth, "gemini", "instructions the next session of Gemini CLI loads (GEMINI.md)",
		"https://geminicli.com/docs/cli/gemini-md"},
	{"QWEN.md", AnyDepth, "qwen", "instructions the next session of Qwen Code loads (QWEN.md)",
		"https://qwenlm.github.io/qwen-code-docs/en/users/features/memory/"},
	{"QWEN.local.md", AnyDepth, "qwen", "instructions the next session of Qwen Code loads (.qwen/QWEN.local.md)",
		"https://qwenlm.github.io/qwen-code-docs/en/users/features/memory/"},
	{".cursorrules", AnyDepth, "cursor", "instructions the next session of Cursor loads (.cursorrules, also read by Cline)",
		"https://cursor.com/docs/context/rules"},
	{".cursor/rules", AnyDepth, "cursor", "instructions the next session of Cursor loads (.cursor/rules)",
		"https://cursor.com/docs/context/rules"},
	{".github/copilot-instructions.md", AnyDepth, "copilot", "instructions the next session of Copilot loads (.github/copilot-instructions.md)",
		"https://docs.github.com/en/copilot/how-tos/configure-custom-instructions/add-repository-instructions"},
	{".github/instructions", AnyDepth, "copilot", "instructions the next session of Copilot loads (.github/instructions/*.instructions.md)",
		"https://docs.github.com/en/copilot/how-tos/configure-custom-instructions/add-repository-instructions"},
	{".windsurfrules", AnyDepth, "", "instructions the next session of Windsurf loads (.windsurfrules, also read by Cline)",
		"https://docs.windsurf.com/windsurf/cascade/memories#rules"},
	{".windsurf/rules", AnyDepth, "", "instructions the next session of Windsurf loads (.windsurf/rules)",
		"https://docs.windsurf.com/windsurf/cascade/memories#rules"},
	{".clinerules", AnyDepth, "", "instructions the next session of Cline loads (.clinerules, a file or a directory)",
		"https://docs.cline.bot/features/cline-rules"},
	{".cline/rules", AnyDepth, "", "instructions the next session of Cline loads (.cline/rules)",
		"https://docs.cline.bot/customization/cline-rules"},

	// Other agents' project files (the forty-fifth attack run's list):
	// the MCP servers and hooks they start, the instructions they load.
	{".continue", AnyDepth, "", "Continue's workspace configuration (.continue/mcpServers: commands Continue starts; .continue/rules: instructions its next session loads)",
		"https://docs.continue.dev/customize/deep-dives/mcp, https://docs.continue.dev/customize/deep-dives/rules"},
	{".kiro", AnyDepth, "", "Kiro's workspace configuration (.kiro/settings/mcp.json: commands Kiro starts; .kiro/hooks: agent hooks; .kiro/steering: instructions)",
		"https://kiro.dev/docs/mcp/configuration/, https://kiro.dev/docs/hooks/, https://kiro.dev/docs/steering/"},
	{".roo", AnyDepth, "", "Roo Code's workspace configuration (.roo/mcp.json: commands Roo Code starts; .roo/rules: instructions)",
		"https://docs.roocode.com/features/mcp/using-mcp-in-roo, https://docs.roocode.com/features/custom-instructions"},
	{".roorules", AnyDepth, "", "instructions the next session of Roo Code loads (.roorules)", "https://docs.roocode.com/features/custom-instructions"},
	{".roomodes", AnyDepth, "", "Roo Code's custom modes (.roomodes: each mode's instructions and the tools it may use)", "https://docs.roocode.com/features/custom-modes"},
	{".amazonq", AnyDepth, "", "Amazon Q Developer's workspace configuration (.amazonq/mcp.json: commands it starts; .amazonq/rules: instructions)",
		"https://docs.aws.amazon.com/amazonq/latest/qdeveloper-ug/context-project-rules.html, https://docs.aws.amazon.com/amazonq/latest/qdeveloper-ug/qdev-mcp.html"},
	{".junie", AnyDepth, "", "Junie's project configuration (.junie/guidelines.md: instructions; .junie/mcp: commands it starts)",
		"https://www.jetbrains.com/help/junie/customize-guidelines.html, https://www.jetbrains.com/help/junie/model-context-protocol-mcp.html"},
	{".goosehints", AnyDepth, "", "instructions the next session of goose loads (.goosehints)", "https://block.github.io/goose/docs/guides/using-goosehints"},
	{".rules", AnyDepth, "", "instructions the next session of Zed's agent loads (.rules)", "https://zed.dev/docs/ai/rules"},
	{".augment-guidelines", AnyDepth, "", "instructions the next session of Augment loads (.augment-guidelines)", "https://docs.augmentcode.com/setup-augment/guidelines"},
	{".augment", AnyDepth, "", "Augment's workspace rules (.augment/rules: instructions its next session loads)", "https://docs.augmentcode.com/setup-augment/guidelines"},
	{".github/chatmodes", AnyDepth, "copilot", "VS Code's custom chat modes (.github/chatmodes/*.chatmode.md: instructions and the tools they may use, loaded by the next session)",
		"https://code.visualstudio.com/docs/copilot/customization/custom-chat-modes"},
	{".github/prompts", AnyDepth, "copilot", "Copilot prompt files (.github/prompts/*.prompt.md: instructions run by name, with the tools they may use)",
		"https://code.visualstudio.com/docs/copilot/customization/prompt-files"},
	{".crush.json", AnyDepth, "", "Crush's configuration (.crush.json: MCP servers and language servers are commands Crush starts)", crushDoc},
	{"crush.json", AnyDepth, "", "Crush's configuration (crush.json: MCP servers and language servers are commands Crush starts)", crushDoc},
}

const (
	bunEnvDoc = "https://bun.sh/docs/runtime/env (Setting environment variables)"
	envDoc    = "direnv.toml(1) load_dotenv, " + bunEnvDoc + ", https://pipenv.pypa.io/en/latest/shell.html (.env)"
	sbtDoc    = "https://www.scala-sbt.org/1.x/docs/Command-Line-Reference.html"
	crushDoc  = "https://github.com/charmbracelet/crush#configuration"
)

const simpleGitHooksDoc = "https://github.com/toplenboren/simple-git-hooks#configuration"

const lintStagedDoc = "https://github.com/lint-staged/lint-staged#configuration"

// lefthookRows are lefthook's configuration files: each hook's run (and
// its rc, its lefthook) is a command the human's git runs. The main file
// and the -local one, each as lefthook.EXT, .lefthook.EXT and
// .config/lefthook.EXT, for every format it reads. Written out, so that
// the linker lays them out: made by a loop, they cost a hook call's first
// judged path some 120 allocations in a fresh process (TestLefthookRows
// holds the table to that loop).
var lefthookRows = []ExecConfigEntry{
	{"lefthook.yml", AnyDepth, "", "lefthook configuration (lefthook.yml: each hook's run is a command git runs)", lefthookDoc},
	{".lefthook.yml", AnyDepth, "", "lefthook configuration (.lefthook.yml: each hook's run is a command git runs)", lefthookDoc},
	{".config/lefthook.yml", AnyDepth, "", "lefthook configuration (.config/lefthook.yml: each hook's run is a command git runs)", lefthookDoc},
	{"lefthook.yaml", AnyDepth, "", "lefthook configuration (lefthook.yaml: each hook's run is a command git runs)", lefthookDoc},
	{".lefthook.yaml", AnyDepth, "", "lefthook configuration (.lefthook.yaml: each hook's run is a command git runs)", lefthookDoc},
	{".config/lefthook.yaml", AnyDepth, "", "lefthook configuration (.config/lefthook.yaml: each hook's run is a command git runs)", lefthookDoc},
	{"lefthook.toml", AnyDepth, "", "lefthook configuration (lefthook.toml: each hook's run is a command git runs)", lefthookDoc},
	{".lefthook.toml", AnyDepth, "", "lefthook configuration (.lefthook.toml: each hook's run is a command git runs)", lefthookDoc},
	{".config/lefthook.toml", AnyDepth, "", "lefthook configuration (.config/lefthook.toml: each hook's run is a command git runs)", lefthookDoc},
	{"lefthook.json", AnyDepth, "", "lefthook configuration (lefthook.json: each hook's run is a command git runs)", lefthookDoc},
	{".lefthook.json", AnyDepth, "", "lefthook configuration (.lefthook.json: each hook's run is a command git runs)", lefthookDoc},
	{".config/lefthook.json", AnyDepth, "", "lefthook configuration (.config/lefthook.json: each hook's run is a command git runs)", lefthookDoc},
	{"lefthook.jsonc", AnyDepth, "", "lefthook configuration (lefthook.jsonc: each hook's run is a command git runs)", lefthookDoc},
	{".lefthook.jsonc", AnyDepth, "", "lefthook configuration (.lefthook.jsonc: each hook's run is a command git runs)", lefthookDoc},
	{".config/lefthook.jsonc", AnyDepth, "", "lefthook configuration (.config/lefthook.jsonc: each hook's run is a command git runs)", lefthookDoc},
	{"lefthook-local.yml", AnyDepth, "", "lefthook configuration (lefthook-local.yml: each hook's run is a command git runs)", lefthookDoc},
	{".lefthook-local.yml", AnyDepth, "", "lefthook configuration (.lefthook-local.yml: each hook's run is a command git runs)", lefthookDoc},
	{".config/lefthook-local.yml", AnyDepth, "", "lefthook configuration (.config/lefthook-local.yml: each hook's run is a command git runs)", lefthookDoc},
	{"lefthook-local.yaml", AnyDepth, "", "lefthook configuration (lefthook-local.yaml: each hook's run is a command git runs)", lefthookDoc},
	{".lefthook-local.yaml", AnyDepth, "", "lefthook configuration (.lefthook-local.yaml: each hook's run is a command git runs)", lefthookDoc},
	{".config/lefthook-local.yaml", AnyDepth, "", "lefthook configuration (.config/lefthook-local.yaml: each hook's run is a command git runs)", lefthookDoc},
	{"lefthook-local.toml", AnyDepth, "", "lefthook configuration (lefthook-local.toml: each hook's run is a command git runs)", lefthookDoc},
	{".lefthook-local.toml", AnyDepth, "", "lefthook configuration (.lefthook-local.toml: each hook's run is a command git runs)", lefthookDoc},
	{".config/lefthook-local.toml", AnyDepth, "", "lefthook configuration (.config/lefthook-local.toml: each hook's run is a command git runs)", lefthookDoc},
	{"lefthook-local.json", AnyDepth, "", "lefthook configuration (lefthook-local.json: each hook's run is a command git runs)", lefthookDoc},
	{".lefthook-local.json", AnyDepth, "", "lefthook configuration (.lefthook-local.json: each hook's run is a command git runs)", lefthookDoc},
	{".config/lefthook-local.json", AnyDepth, "", "lefthook configuration (.config/lefthook-local.json: each hook's run is a command git runs)", lefthookDoc},
	{"lefthook-local.jsonc", AnyDepth, "", "lefthook configuration (lefthook-local.jsonc: each hook's run is a command git runs)", lefthookDoc},
	{".lefthook-local.jsonc", AnyDepth, "", "lefthook configuration (.lefthook-local.jsonc: each hook's run is a command git runs)", lefthookDoc},
	{".config/lefthook-local.jsonc", AnyDepth, "", "lefthook configuration (.config/lefthook-local.jsonc: each hook's run is a command git runs)", lefthookDoc},
}

const lefthookDoc = "https://lefthook.dev/configuration/ (Config file name)"

// ExecConfigList returns the list of executable configuration, each entry
// with the document that says it runs code (for README, doctor and the
// Landlock launcher, which keeps every AnyDepth entry of a project read-only).
func ExecConfigList() []ExecConfigEntry { return append([]ExecConfigEntry(nil), execConfig()...) }

// anyDepthEntry is an AnyDepth entry split into its names, lower case.
type anyDepthEntry struct {
	parts []string
	what  string
	// next is 1 + the index in anyDepth of the next entry with the same
	// first name; 0 after the last.
	next int
}

// anyDepthTable is anyDepth, and its index by first name (1 + the index
// of the first entry with that name): Classify asks for every segment of
// every word of a command.
type anyDepthTable struct {
	all    []anyDepthEntry
	byName map[string]int
}

// anyDepthIndex is made on first use, by a hook call's first path judged:
// every entry's names are cut from its one lower-cased path, into one
// array, and the index holds a number per name, not a list.
var anyDepthIndex = sync.OnceValue(func() anyDepthTable {
	lefthook := lefthookRows
	n := len(execConfigRows) + len(lefthook)
	t := anyDepthTable{all: make([]anyDepthEntry, 0, n)}
	names := make([]string, 0, 2*n)
	for _, rows := range [][]ExecConfigEntry{execConfigRows, lefthook} {
		for _, e := range rows {
			if e.Anchor != AnyDepth || e.Path == claudeDirName || e.Path == gitDirName {
				continue
			}
			start := len(names)
			for rest := strings.ToLower(e.Path); ; {
				i := strings.IndexByte(rest, '/')
				if i < 0 {
					names = append(names, rest)
					break
				}
				names = append(names, rest[:i])
				rest = rest[i+1:]
			}
			t.all = append(t.all, anyDepthEntry{parts: names[start:len(names):len(names)], what: e.What})
		}
	}
	t.byName = make(map[string]int, len(t.all))
	for i := len(t.all) - 1; i >= 0; i-- {
		first := t.all[i].parts[0]
		t.all[i].next = t.byName[first]
		t.byName[first] = i + 1
	}
	return t
})

// anyDepth are the AnyDepth entries judged by name (not .claude and .git,
// which have their own rules), in execConfig's order.
func anyDepth() []anyDepthEntry { return anyDepthIndex().all }

// ProjectExecConfig classifies a path by the names in it, at any depth:
// the answer Classify gives for what any directory may hold (.claude,
// .git, the AnyDepth entries of the executable-configuration list, other
// agents' project files), whatever directory rel sits in. rel is
// "/"-separated, relative to a project (or absolute); its segments are
// compared without regard to case. It is what the Landlock launcher asks
// of every name in a project it makes writable: an answer of ExecConfig
// or GuardCritical stays read-only.
//
// A directory that would hold an entry of more than one name (.cursor for
// .cursor/mcp.json) is executable configuration too: moving a directory
// into its place creates the entry.
func ProjectExecConfig(rel string) Protection {
	rel = filepath.ToSlash(rel)
	abs := strings.HasPrefix(rel, "/")
	var segs []string
	for _, s := range strings.Split(rel, "/") {
		if s != "" && s != "." {
			segs = append(segs, s)
		}
	}
	return anyDepthRules(segs, abs)
}

// anyDepthRules is ProjectExecConfig on the segments of a path (absolute
// when abs: the Path it reports starts with a separator).
// ownHolder reports whether a directory named name that holds protected
// entries of two names or more is the repository's own rather than a
// tool's configuration directory (Protection.Holds): .github, whose
// workflows, templates and CODEOWNERS are the project's work, beside
// Copilot's hooks, agents and instructions. Every other such directory
// (.gemini, .qwen, .cursor, .codex, .copilot, .github/copilot, .config,
// .cargo) is a tool's configuration, whose files a tool may load by names
// the list does not know yet (the fifty-second attack run's
// .qwen/commands/x.toml, whose !{...} runs a shell): held whole.
func ownHolder(name string) bool { return strings.EqualFold(name, ".github") }

func anyDepthRules(segs []string, abs bool) Protection {
	join := func(n int) string {
		p := strings.Join(segs[:n], string(filepath.Separator))
		if abs {
			p = string(filepath.Separator) + p
		}
		return p
	}
	var best Protection
	for i, s := range segs {
		if s == "" {
			continue
		}
		ls := strings.ToLower(s)
		switch ls {
		case claudeDirName:
			best = best.max(claudeRules(join(i+1), segs[i+1:], "a Claude Code configuration directory (.claude)"))
		case gitDirName:
			best = best.max(gitRules(join(i+1), segs[i+1:]))
		}
		all := anyDepthIndex().all
		for k := anyDepthIndex().byName[ls]; k != 0; k = all[k-1].next {
			e := all[k-1]
			n := 1
			for n < len(e.parts) && i+n < len(segs) && strings.ToLower(segs[i+n]) == e.parts[n] {
				n++
			}
			switch {
			case n == len(e.parts):
				best = best.max(Protection{Tier: ExecConfig, What: e.what, Path: join(i + n)})
			case i+n == len(segs):
				// The path ends inside the entry's names: a directory
				// that would hold it.
				best = best.max(Protection{Tier: ExecConfig, What: "a directory that holds " + e.what, Path: join(i + n), Holds: ownHolder(segs[i+n-1])})
			}
		}
		if miseConfigName(ls) {
			best = best.max(Protection{Tier: ExecConfig, What: miseEnvWhat, Path: join(i + 1)})
		}
		if s[0] == '.' || plainProtected(ls) {
			if pr, ok := agentProjectRule(join(i), segs[i:]); ok {
				best = best.max(pr)
			} else if pr, ok := agentProjectAncestor(join(i), segs[i:]); ok {
				best = best.max(pr)
			}
		}
	}
	return best
}

// PatternCouldName reports whether a file rule's pattern (doublestar
// syntax, "/"-separated) names an entry that is protected at any depth
// (.claude, .git, an AnyDepth entry of the executable-configuration list,
// another agent's project files), and what. A rule that names one is
// refused. A rule that reaches one only through ** or a bare * stays
// usable and simply never covers it (Classify judges every concrete path).
func PatternCouldName(pattern string) (string, bool) {
	segs := strings.Split(pattern, "/")
	for i, seg := range segs {
		if what, ok := SegmentCouldName(seg); ok {
			return what, true
		}
		if seg == "**" || seg == "*" {
			continue
		}
		for _, e := range anyDepth() {
			if len(e.parts) > 1 && namesParts(segs[i:], e.parts) {
				return e.what, true
			}
		}
		for _, f := range agentFiles {
			if f.base == atProject && namesParts(segs[i:], lowerAll(f.parts)) {
				return f.why, true
			}
		}
	}
	return "", false
}

// namesParts reports whether the pattern segments, from their first,
// spell the names parts: the first names the first part, each next one
// could match its part (.cursor/*.json names .cursor/mcp.json), and none is
// ** or a bare * (those reach, they do not name).
func namesParts(segs, parts []string) bool {
	if len(segs) < len(parts) {
		return false
	}
	for j, p := range parts {
		if segs[j] == "**" || segs[j] == "*" {
			return false
		}
		if j == 0 && !segNames(segs[j], p) || j > 0 && !segCouldMatch(segs[j], p) {
			return false
		}
	}
	return true
}

// segNames reports whether one pattern segment names name: it could match
// it (a dot name only by a segment that starts with a dot, as in bash),
// and, for a name with no dot, is that name (a "*.toml" reaches bunfig.toml
// without naming it).
func segNames(seg, name string) bool {
	if !strings.HasPrefix(name, ".") {
		return strings.EqualFold(seg, name)
	}
	return segCouldMatch(seg, name)
}

func lowerAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToLower(s)
	}
	return out
}
