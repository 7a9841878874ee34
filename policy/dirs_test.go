package policy

import "testing"

// TestDirs: the state and configuration directories follow the XDG
// variables only when they hold an absolute path (a relative one would
// move them with the working directory); otherwise they sit under home.
func TestDirs(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	for _, c := range []struct {
		env, val, want string
		dir            func() (string, error)
	}{
		{"XDG_STATE_HOME", "/x/state", "/x/state/loopguard", StateDir},
		{"XDG_STATE_HOME", "rel/state", "/home/u/.local/state/loopguard", StateDir},
		{"XDG_STATE_HOME", "", "/home/u/.local/state/loopguard", StateDir},
		{"XDG_CONFIG_HOME", "/x/config", "/x/config/loopguard", ConfigDir},
		{"XDG_CONFIG_HOME", "rel", "/home/u/.config/loopguard", ConfigDir},
		{"XDG_CONFIG_HOME", "", "/home/u/.config/loopguard", ConfigDir},
	} {
		t.Setenv(c.env, c.val)
		if got, err := c.dir(); err != nil || got != c.want {
			t.Errorf("%s=%q: %s (%v), want %s", c.env, c.val, got, err, c.want)
		}
	}
}
