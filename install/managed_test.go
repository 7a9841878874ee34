package install

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMergeManaged(t *testing.T) {
	o := Options{Binary: "/usr/local/bin/loopguard-hook", Deadline: 5 * time.Second, Managed: true}
	if got := ManagedLocks([]byte(`{"permissions": {"allow": ["Read"]}}`)); len(got) != 2 {
		t.Fatalf("control: ManagedLocks of a file without them = %v", got)
	}
	out, changed, err := Merge([]byte(`{"permissions": {"allow": ["Read"], "disableBypassPermissionsMode": "enable"}}`), o)
	if err != nil || !changed {
		t.Fatalf("Merge: %v %v", changed, err)
	}
	if got := ManagedLocks(out); len(got) != 0 {
		t.Errorf("after Merge the locks %v are missing:\n%s", got, out)
	}
	if !strings.Contains(string(out), `"allow":["Read"]`) {
		t.Errorf("the other permissions were lost:\n%s", out)
	}
	regs, _ := Hooks(out, o.Binary)
	if !CoversEvents(regs) {
		t.Errorf("the hooks were not registered:\n%s", out)
	}
	if again, changed, _ := Merge(out, o); changed || !reflect.DeepEqual(again, out) {
		t.Errorf("a second Merge changed the file")
	}
	if _, _, err := Merge([]byte(`{"permissions": []}`), o); err == nil {
		t.Error(`Merge accepted "permissions" that is not an object`)
	}
}

// Remove after a managed Apply puts the managed file back byte for byte,
// the switches init added included; switches that were there stay.
func TestManagedApplyRemove(t *testing.T) {
	for _, orig := range []string{
		"{\n  \"permissions\": {\"deny\": [\"WebFetch\"]}\n}\n",
		"{\n  \"allowManagedHooksOnly\": true\n}\n",
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "managed-settings.json")
		if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
			t.Fatal(err)
		}
		o := Options{Binary: "/usr/local/bin/loopguard-hook", Deadline: 5 * time.Second, Managed: true,
			Sandbox: &Sandbox{DenyWrite: []string{"~/.local/state/loopguard"}}}
		if _, err := Apply(path, filepath.Join(dir, "backups"), o, false); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); len(ManagedLocks(b)) != 0 {
			t.Fatalf("after Apply the switches are missing:\n%s", b)
		}
		res, err := Remove(path, filepath.Join(dir, "backups"), o.Binary, false)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != orig || !res.Restored {
			t.Errorf("after Remove (restored %v):\n%s\nwant the original:\n%s", res.Restored, b, orig)
		}
	}
}
