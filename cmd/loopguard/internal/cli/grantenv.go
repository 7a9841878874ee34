package cli

import "os"

// GrantEnv is where grant runs: the home and project dirs and the PATH the
// agent's commands will see.
type GrantEnv struct {
	Home, Project, Path string
	Trusted             []string // as the hook will trust them
}

func CurrentGrantEnv() (GrantEnv, error) {
	cfg, err := LoadConfig()
	if err != nil {
		return GrantEnv{}, err
	}
	home, _ := os.UserHomeDir()
	return GrantEnv{Home: home, Project: ProjectDir(), Path: os.Getenv("PATH"), Trusted: cfg.Trusted()}, nil
}
