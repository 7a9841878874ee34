package install

import (
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
