package policy

import (
	"path/filepath"
	"strings"
)

// SecretEntry is one path in the home directory that holds a secret: a
// private key, a token, a password, a browser's logins, or what the user
// typed (a history). Reading it is denied: no agent call reads or writes
// it, whatever grants exist (it is guard-critical, with Secret set); no
// scope covers it; no confined program reads it, and a read-only tool's
// search of a directory that holds one is refused (Places.ContainsSecret).
// Listing the directory that holds it is not refused (ls ~ still works).
type SecretEntry struct {
	// Path is "/"-separated, relative to the home directory. A directory
	// covers everything inside it.
	Path string
	// Moves names the environment variable that moves it, as its tool
	// reads it: XDG_CONFIG_HOME (Path starts with .config/), CODEX_HOME
	// (.codex/), CLAUDE_CONFIG_DIR (.claude/). Where Places knows the
	// variable's value, the moved path is secret too, and the one under
	// the home stays secret (an older login may still be there).
	Moves string
	// What says for a person what it is.
	What string
	// Why says why reading it is denied: what a reader would hold.
	Why string
	// Doc is the document that says what it holds.
	Doc string
}

// homeSecrets is the one list of secrets in the home directory. The
// guard's own state, configuration and the Vault token its config names
// are Places' own entries (StateDir, ConfigDir, Secrets).
var homeSecrets = []SecretEntry{
	// Keys.
	{".ssh", "", "ssh's keys and configuration", "its private keys log in wherever the public ones are authorized",
		"ssh(1) FILES (~/.ssh/id_*)"},
	{".gnupg", "", "GnuPG's keys", "its private keys sign and decrypt as the user",
		"gpg(1) FILES, https://www.gnupg.org/documentation/manuals/gnupg/GPG-Configuration.html"},

	// Keyrings and password stores.
	{".local/share/keyrings", "", "the keyring files (the guard's key, and the desktop's saved passwords)",
		"they hold the guard's master key and every password the desktop keeps", "https://wiki.gnome.org/Projects/GnomeKeyring"},
	{"Library/Keychains", "", "the keychains (the guard's key, and the saved passwords)",
		"they hold the guard's master key and every password macOS keeps", "security(1)"},
	{".password-store", "", "pass's password store", "every password it keeps (encrypted, next to the names of every account)",
		"pass(1), https://www.passwordstore.org/"},

	// Cloud and cluster credentials.
	{".aws", "", "the AWS CLI's credentials and configuration", "access keys and SSO tokens",
		"https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html"},
	{".azure", "", "the Azure CLI's login", "az login's tokens (msal_token_cache.json)",
		"https://learn.microsoft.com/en-us/cli/azure/azure-cli-configuration"},
	{".config/gcloud", "", "the Google Cloud CLI's login", "gcloud's credentials and access tokens (credentials.db, access_tokens.db)",
		"https://cloud.google.com/sdk/docs/configurations"},
	{".oci", "", "the Oracle Cloud CLI's configuration and API keys", "its API signing keys",
		"https://docs.oracle.com/en-us/iaas/Content/API/Concepts/sdkconfig.htm"},
	{".kube/config", "", "kubectl's kubeconfig", "cluster tokens and client keys",
		"https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/"},
	{".docker/config.json", "", "Docker's client configuration", "docker login's registry credentials (base64, without a credential helper)",
		"https://docs.docker.com/reference/cli/docker/login/"},
	{".terraform.d/credentials.tfrc.json", "", "Terraform's credentials", "terraform login's API tokens",
		"https://developer.hashicorp.com/terraform/cli/commands/login"},
	{".vault-token", "", "Vault's token file", "vault login's token",
		"https://developer.hashicorp.com/vault/docs/commands/login"},

	// Package registries and forges.
	{".npmrc", "", "npm's user configuration", "npm login's registry tokens (_authToken)",
		"https://docs.npmjs.com/cli/v10/configuring-npm/npmrc#auth-related-configuration"},
	{".pypirc", "", "the PyPI upload configuration", "twine's passwords and API tokens",
		"https://packaging.python.org/en/latest/specifications/pypirc/"},
	{".netrc", "", "the netrc file", "logins and passwords for hosts (curl, git, ftp, pip read it)",
		"https://everything.curl.dev/usingcurl/netrc.html"},
	{".m2/settings.xml", "", "Maven's user settings", "repository servers' passwords",
		"https://maven.apache.org/settings.html#servers"},
	{".gradle/gradle.properties", "", "Gradle's user properties", "repository and signing credentials",
		"https://docs.gradle.org/current/userguide/build_environment.html#sec:gradle_configuration_properties"},
	{".cargo/credentials.toml", "", "Cargo's credentials", "cargo login's registry tokens",
		"https://doc.rust-lang.org/cargo/reference/config.html#credentials"},
	{".cargo/credentials", "", "Cargo's credentials (the old name)", "cargo login's registry tokens",
		"https://doc.rust-lang.org/cargo/reference/config.html#credentials"},
	{".local/share/uv/credentials", "", "uv's credential store", "uv auth login's tokens and passwords, in the clear where no keyring holds them",
		"https://docs.astral.sh/uv/concepts/authentication/"},
	{".config/gh/hosts.yml", "XDG_CONFIG_HOME", "GitHub CLI's hosts", "gh auth login's tokens (where no keyring holds them)",
		"https://cli.github.com/manual/gh_help_environment (GH_CONFIG_DIR, XDG_CONFIG_HOME)"},
	{".git-credentials", "", "git's credential store", "passwords and tokens, in the clear",
		"git-credential-store(1) FILES"},
	{".config/git/credentials", "XDG_CONFIG_HOME", "git's credential store", "passwords and tokens, in the clear",
		"git-credential-store(1) FILES"},
	{".config/glab-cli/config.yml", "XDG_CONFIG_HOME", "GitLab CLI's configuration", "glab auth login's tokens (token: per host)",
		"https://gitlab.com/gitlab-org/cli/-/blob/main/docs/source/config/_index.md (GLAB_CONFIG_DIR, XDG_CONFIG_HOME)"},
	{".config/containers/auth.json", "XDG_CONFIG_HOME", "Podman's and Buildah's registry logins (the file they fall back to)", "podman login's registry credentials (base64)",
		"containers-auth.json(5) (${XDG_RUNTIME_DIR}/containers/auth.json, then $XDG_CONFIG_HOME/containers/auth.json)"},
	{".cache/huggingface/token", "", "the Hugging Face CLI's token", "hf auth login's access token",
		"https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables (HF_TOKEN_PATH, HF_HOME)"},
	{".cache/huggingface/stored_tokens", "", "the Hugging Face CLI's saved tokens", "every access token hf auth login saved",
		"https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables (HF_STORED_TOKENS_PATH)"},
	{".huggingface/token", "", "the Hugging Face CLI's token (the old place)", "huggingface-cli login's access token",
		"https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables (HF_TOKEN_PATH)"},

	// Databases, object stores and encryption keys.
	{".pgpass", "", "PostgreSQL's password file", "database passwords, in the clear, by host and user",
		"https://www.postgresql.org/docs/current/libpq-pgpass.html"},
	{".my.cnf", "", "the MySQL client's option file", "its [client] password, in the clear",
		"https://dev.mysql.com/doc/refman/8.4/en/option-files.html"},
	{".s3cfg", "", "s3cmd's configuration", "S3 access and secret keys",
		"https://s3tools.org/kb/item14.htm"},
	{".config/rclone/rclone.conf", "XDG_CONFIG_HOME", "rclone's configuration", "every remote's keys, tokens and (obscured, not encrypted) passwords",
		"https://rclone.org/docs/#config-config-file"},
	{".config/sops/age/keys.txt", "XDG_CONFIG_HOME", "sops's age keys", "the private keys that decrypt the project's sops-encrypted secrets",
		"https://github.com/getsops/sops#encrypting-using-age (SOPS_AGE_KEY_FILE)"},

	// Browser profiles: saved passwords, cookies, sessions.
	{".mozilla", "", "Firefox's profiles", "saved passwords, cookies and sessions",
		"https://support.mozilla.org/kb/profiles-where-firefox-stores-user-data"},
	{"snap/firefox", "", "Firefox's profiles (the snap)", "saved passwords, cookies and sessions",
		"https://support.mozilla.org/kb/profiles-where-firefox-stores-user-data"},
	{".config/google-chrome", "XDG_CONFIG_HOME", "Chrome's profiles", "saved passwords, cookies and sessions",
		"https://chromium.googlesource.com/chromium/src/+/HEAD/docs/user_data_dir.md"},
	{".config/chromium", "XDG_CONFIG_HOME", "Chromium's profiles", "saved passwords, cookies and sessions",
		"https://chromium.googlesource.com/chromium/src/+/HEAD/docs/user_data_dir.md"},
	{".config/BraveSoftware", "XDG_CONFIG_HOME", "Brave's profiles", "saved passwords, cookies and sessions",
		"https://chromium.googlesource.com/chromium/src/+/HEAD/docs/user_data_dir.md"},

	// Shell and REPL histories: what was typed, passwords and tokens too.
	{".bash_history", "", "bash's history", "commands typed, with the passwords and tokens in them", "bash(1) HISTFILE"},
	{".zsh_history", "", "zsh's history", "commands typed, with the passwords and tokens in them", "zshparam(1) HISTFILE"},
	{".local/share/fish/fish_history", "", "fish's history", "commands typed, with the passwords and tokens in them",
		"https://fishshell.com/docs/current/interactive.html#searchable-command-history"},
	{".python_history", "", "Python's REPL history", "what was typed, secrets too",
		"https://docs.python.org/3/library/site.html#rlcompleter-config"},
	{".node_repl_history", "", "Node.js's REPL history", "what was typed, secrets too",
		"https://nodejs.org/api/repl.html#persistent-history"},
	{".psql_history", "", "psql's history", "queries typed, passwords too", "psql(1) FILES"},
	{".mysql_history", "", "the mysql client's history", "statements typed, passwords too",
		"https://dev.mysql.com/doc/refman/8.4/en/mysql-logging.html"},
	{".sqlite_history", "", "the sqlite3 shell's history", "statements typed", "https://sqlite.org/cli.html"},
	{".lesshst", "", "less's history", "searches and commands typed", "less(1) LESSHISTFILE"},
	{".viminfo", "", "Vim's viminfo", "registers, searches and command lines from past sessions", "vim :help viminfo"},

	// Coding agents' logins and MCP configuration (MCP servers' env holds
	// their tokens).
	{".claude.json", "", "Claude Code's state (~/.claude.json: MCP servers and their environment, hooks and permissions)", "MCP servers' tokens",
		"https://code.claude.com/docs/en/settings, https://code.claude.com/docs/en/mcp"},
	{".claude/.credentials.json", "CLAUDE_CONFIG_DIR", "Claude Code's login", "its OAuth tokens",
		"https://code.claude.com/docs/en/iam#credential-management"},
	{".codex/auth.json", "CODEX_HOME", "Codex's login", "its API key or ChatGPT tokens",
		"https://developers.openai.com/codex/auth"},
	{".codex/config.toml", "CODEX_HOME", "Codex's configuration (MCP servers and their environment, hooks)", "MCP servers' tokens",
		"https://developers.openai.com/codex/mcp"},
	{".gemini/oauth_creds.json", "", "Gemini CLI's login", "its OAuth tokens",
		"https://geminicli.com/docs/get-started/authentication"},
	{".gemini/.env", "", "Gemini CLI's environment file", "API keys (GEMINI_API_KEY)",
		"https://geminicli.com/docs/get-started/authentication"},
	{".gemini/settings.json", "", "Gemini CLI's settings (MCP servers and their environment, hooks)", "MCP servers' tokens",
		"https://geminicli.com/docs/get-started/configuration"},
	{".copilot/config.json", "", "Copilot CLI's configuration", "its login token where no keychain holds it",
		"https://docs.github.com/en/copilot/how-tos/copilot-cli/set-up-copilot-cli/troubleshoot-copilot-cli-auth"},
	{".copilot/mcp-config.json", "", "Copilot CLI's MCP server list", "MCP servers' tokens",
		"https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/add-mcp-servers"},
	{".cursor/mcp.json", "", "Cursor's MCP server list", "MCP servers' tokens", "https://cursor.com/docs/mcp"},
	{".cursor/cli-config.json", "", "Cursor CLI's configuration", "its login (authInfo)",
		"https://cursor.com/docs/cli/reference/authentication"},
	{".config/cursor/auth.json", "XDG_CONFIG_HOME", "Cursor's login", "its session tokens",
		"https://cursor.com/docs/cli/reference/authentication"},
	{".qwen/oauth_creds.json", "", "Qwen Code's login", "its OAuth tokens",
		"https://qwenlm.github.io/qwen-code-docs/en/users/configuration/auth/"},
	{".qwen/.env", "", "Qwen Code's environment file", "API keys",
		"https://qwenlm.github.io/qwen-code-docs/en/users/configuration/auth/"},
	{".qwen/settings.json", "", "Qwen Code's settings (MCP servers and their environment, hooks)", "MCP servers' tokens",
		"https://qwenlm.github.io/qwen-code-docs/en/users/configuration/settings/"},
	{".local/share/opencode/auth.json", "", "OpenCode's logins", "providers' API keys and OAuth tokens",
		"https://opencode.ai/docs/providers/"},
	{".config/opencode", "XDG_CONFIG_HOME", "OpenCode's configuration (MCP servers, providers; loopguard's plugin)", "MCP servers' and providers' keys",
		"https://opencode.ai/docs/config/"},
}

// HomeSecrets returns the list of secrets in the home directory, each with
// what it is, why it is secret and the document that says so: for doctor,
// the README and the launcher, which never makes one readable.
func HomeSecrets() []SecretEntry { return append([]SecretEntry(nil), homeSecrets...) }

// secretEntries adds pl's entries for the secrets in the home directory
// to b: guard-critical and secret, and exact (a directory that holds one
// stays usable: ls ~/.kube, rm -r ~/.cargo/registry; a search of it is
// refused by ContainsSecret). Each is described as its What and Why say
// (entry.desc).
func (pl Places) secretEntries(b *entryBuilder) {
	if pl.Home == "" {
		return
	}
	for _, s := range homeSecrets {
		e := entry{tier: GuardCritical, secret: true, what: s.What, why: s.Why, exact: true}
		if s.Moves == "" {
			b.join(e, pl.Home, s.Path)
			continue
		}
		for _, p := range pl.secretPaths(s) {
			e.path = p
			b.add(e)
		}
	}
}

// secretPaths are the absolute paths of s for pl: under the home, and
// where the variable s.Moves names moves it.
func (pl Places) secretPaths(s SecretEntry) []string {
	out := []string{filepath.Join(pl.Home, filepath.FromSlash(s.Path))}
	var base, dir string
	switch s.Moves {
	case "XDG_CONFIG_HOME":
		base, dir = ".config/", pl.XDGConfigHome
	case "CODEX_HOME":
		base, dir = ".codex/", pl.CodexHome
	case "CLAUDE_CONFIG_DIR":
		base, dir = ".claude/", pl.ClaudeConfigDir
	}
	if dir != "" && filepath.IsAbs(dir) && strings.HasPrefix(s.Path, base) {
		if moved := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(s.Path, base))); moved != out[0] {
			out = append(out, moved)
		}
	}
	return out
}
