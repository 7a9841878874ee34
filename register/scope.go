package register

// The scopes a registration is written for (Command.Scope): the user's
// own hook file, or a project's (which a repository may commit, and a
// cloud agent may need).
const (
	ScopeUser    = "user"
	ScopeProject = "project"
)

func validScope(s string) bool { return s == "" || s == ScopeUser || s == ScopeProject }
