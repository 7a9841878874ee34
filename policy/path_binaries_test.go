package policy

import "testing"

// A loopguard binary wherever PATH finds one is guard-critical (the
// plugin runs the loopguard-hook PATH finds); the PATH directories and
// other files in them are not.
func TestPathBinaries(t *testing.T) {
	pl := Places{Home: "/home/u", Path: "/home/u/.local/bin:relative/bin::/usr/local/bin"}.Prepare()
	for _, c := range []struct {
		p    string
		want Tier
	}{
		{"/home/u/.local/bin/loopguard-hook", GuardCritical},
		{"/home/u/.local/bin/loopguard", GuardCritical},
		{"/home/u/.local/bin/loopguard-exec", GuardCritical},
		{"/home/u/.local/bin/loopguard-confine", GuardCritical},
		{"/usr/local/bin/loopguard-hook", GuardCritical},
		// Controls: the directory itself, a sibling, a name in no PATH dir.
		{"/home/u/.local/bin", Ordinary},
		{"/home/u/.local/bin/other", Ordinary},
		{"/home/u/.local/bin/loopguard-hook2", Ordinary},
		{"/opt/x/loopguard-hook", Ordinary},
	} {
		if got := pl.Classify(c.p).Tier; got != c.want {
			t.Errorf("Classify(%s) = %s; want %s", c.p, got, c.want)
		}
	}
	if got := (Places{Home: "/home/u"}).Prepare().Classify("/usr/local/bin/loopguard-hook").Tier; got != Ordinary {
		t.Errorf("without PATH, /usr/local/bin/loopguard-hook is %s; want ordinary (no binary there is known)", got)
	}
}
