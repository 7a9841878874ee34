package policy

import "strings"

// mise reads, beside mise.toml and its fixed names (execConfigRows), a
// file per environment: mise.<env>.toml, .mise.<env>.toml and their
// .local variants, where MISE_ENV names <env> (the ninety-third attack
// run's mise.dev.toml ran its [env] _.source on the user's next cd with
// MISE_ENV=dev). They are judged by the pattern, not a list of
// environments: miseConfigPattern for git's pathspecs (CandidateNames).
const miseConfigPattern = "mise.*.toml"

const miseEnvWhat = "mise configuration for an environment (mise.<env>.toml, .mise.<env>.toml and their .local variants, read where MISE_ENV names <env>: hooks, env _.source and templates run when a shell with mise enters the directory)"

// miseConfigName reports whether name (lower case) is a mise
// configuration file by its pattern: [.]mise.[<env>.][local.]toml, and
// rtx's old names (.rtx.toml, .rtx.local.toml, .rtx.<env>.toml).
func miseConfigName(name string) bool {
	s := strings.TrimPrefix(name, ".")
	if !strings.HasSuffix(s, ".toml") {
		return false
	}
	return strings.HasPrefix(s, "mise.") && len(s) >= len("mise.toml") ||
		strings.HasPrefix(name, ".rtx.") && len(s) >= len("rtx.toml")
}
