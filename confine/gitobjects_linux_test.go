//go:build linux

package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckObjectsDirMovedIn: the thirty-ninth attack run wrote a forged
// blob under the hook's blob's name in objects/stash/XX in one call, and in
// the next removed objects/XX and moved objects/stash/XX there: the watch
// lost objects/XX (every object changed since the call began is then
// read), and a move keeps its files' times, so the forged blob was not
// read and the user's next checkout of the hook wrote the call's. A
// directory moved in is now read whole. Control: with nothing moved, a
// rewrite in place of a file is still found, and nothing else is held.
func TestCheckObjectsDirMovedIn(t *testing.T) {
	for _, moved := range []bool{false, true} {
		proj, home, sh := gitShell(t)
		sh(`git init -q && mkdir .githooks && printf '#!/bin/sh\nexit 0\n' > .githooks/pre-commit && chmod +x .githooks/pre-commit && git add -A && git commit -qm hook`)
		id := sh(`git rev-parse HEAD:.githooks/pre-commit`)
		forge := `python3 -c 'import zlib,sys; d=b"#!/bin/sh\necho PWNED\n"; open(sys.argv[1],"wb").write(zlib.compress(b"blob %d\0"%len(d)+d))' `
		if moved {
			// The earlier call's.
			sh(`mkdir -p .git/objects/stash/` + id[:2] + ` && ` + forge + `.git/objects/stash/` + id[:2] + `/` + id[2:])
			time.Sleep(200 * time.Millisecond)
		}
		g, p, e := gitSnapshot(t, proj, home)
		if moved {
			sh(`rm -f .git/objects/` + id[:2] + `/* && rmdir .git/objects/` + id[:2] + ` && mv .git/objects/stash/` + id[:2] + ` .git/objects/` + id[:2])
		} else {
			sh(`f=.git/objects/` + id[:2] + `/` + id[2:] + ` && chmod 644 $f && ` + forge + `$f`)
		}
		held := &holder{p: p, e: e}
		lines := g.checkObjects(held)
		held.close()
		if got := sh(`git cat-file -p ` + id); strings.Contains(got, "PWNED") || len(lines) == 0 || !strings.Contains(lines[0], "held back .git/objects/"+id[:2]+"/"+id[2:]) {
			t.Errorf("moved %v: the forged blob is still %s's: %q; said %q", moved, id, got, lines)
		}
	}
}

// packIdxRename rewrites a pack index (argv 1) to argv 2, giving the
// object named argv 3 the name argv 4.
const packIdxRename = `import sys,struct,hashlib
src,dst,old,new=sys.argv[1],sys.argv[2],bytes.fromhex(sys.argv[3]),bytes.fromhex(sys.argv[4])
d=open(src,"rb").read()
n=struct.unpack(">I",d[8+255*4:8+256*4])[0]
o=8+256*4
names=[d[o+20*i:o+20*i+20] for i in range(n)]; o+=20*n
crcs=[d[o+4*i:o+4*i+4] for i in range(n)]; o+=4*n
offs=[d[o+4*i:o+4*i+4] for i in range(n)]; o+=4*n
tail=d[o:-20]  # large offsets (none) + pack checksum
ents=[(new if nm==old else nm,c,f) for nm,c,f in zip(names,crcs,offs)]
ents.sort()
out=bytearray(d[:8])
for i in range(256): out+=struct.pack(">I",sum(1 for e in ents if e[0][0]<=i))
for e in ents: out+=e[0]
for e in ents: out+=e[1]
for e in ents: out+=e[2]
out+=tail
out+=hashlib.sha1(bytes(out)).digest()
open(dst,"wb").write(bytes(out))
`

// TestCheckObjectsPackMovedIn: as TestCheckObjectsDirMovedIn, with a pack
// whose index gives the hook's blob's name to the call's blob, written in
// objects/stash by an earlier call and moved in as objects/pack (the
// loose blob removed). Control: a new pack/ made by git, with nothing
// forged, holds nothing.
func TestCheckObjectsPackMovedIn(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	for _, forged := range []bool{false, true} {
		proj, home, sh := gitShell(t)
		dir := filepath.Dir(proj)
		mustDo(t, os.WriteFile(filepath.Join(dir, "px.py"), []byte(packIdxRename), 0o644))
		sh(`git init -q && mkdir .githooks && printf '#!/bin/sh\nexit 0\n' > .githooks/pre-commit && chmod +x .githooks/pre-commit && git add -A && git commit -qm hook`)
		id := sh(`git rev-parse HEAD:.githooks/pre-commit`)
		// The earlier call's.
		script := `E=$(printf '#!/bin/sh\necho PWNED\n' | git hash-object -w --stdin); mkdir .git/objects/stash
p=$(git rev-list --objects --all | cut -c1-40 | grep -v ` + id + ` | { cat; echo $E; } | git pack-objects -q .git/objects/stash/pack)
rm -f .git/objects/stash/*.rev`
		if forged {
			script += `
python3 ../px.py .git/objects/stash/pack-$p.idx ../new.idx $E ` + id + ` && mv -f ../new.idx .git/objects/stash/pack-$p.idx`
		}
		sh(script)
		time.Sleep(200 * time.Millisecond)
		g, p, e := gitSnapshot(t, proj, home)
		sh(`rm -f .git/objects/` + id[:2] + `/` + id[2:] + ` && mv .git/objects/pack .git/objects/pold && mv .git/objects/stash .git/objects/pack && rm -rf .git/objects/pold`)
		held := &holder{p: p, e: e}
		lines := g.checkObjects(held)
		held.close()
		got, _ := exec.Command("git", "-C", proj, "cat-file", "-p", id).CombinedOutput()
		switch {
		case forged && (strings.Contains(string(got), "PWNED") || len(lines) == 0 || !strings.Contains(strings.Join(lines, "\n"), "held back .git/objects/pack/pack-")):
			t.Errorf("the forged pack still gives %s the call's blob: %q; said %q", id, got, lines)
		case !forged && (len(lines) != 0 || strings.Contains(string(got), "PWNED")):
			t.Errorf("control: a pack git made was held, or the blob is not the hook's: %q; said %q", got, lines)
		}
	}
}

// TestHoldResolutions: a resolution of git rerere's the call wrote
// (.git/rr-cache/ID/postimage, which git's next merge with that conflict
// writes into the worktree: the thirty-ninth attack run's wrote the call's
// hook), made in place, moved in from a directory an earlier call wrote,
// or reached through a link, is held back. Control: the user's own older
// resolution, and one beside the call's, stay.
func TestHoldResolutions(t *testing.T) {
	for _, c := range []struct{ name, before, during, held string }{
		{"made", "", "mkdir -p .git/rr-cache/ab && echo evil > .git/rr-cache/ab/postimage", ".git/rr-cache/ab/postimage"},
		{"moved in", "mkdir -p .git/stage/ab && echo evil > .git/stage/ab/postimage", "mv .git/stage .git/rr-cache", ".git/rr-cache/ab/postimage"},
		{"id dir moved in", "mkdir -p .git/rr-cache/cd .git/stage/ab && echo mine > .git/rr-cache/cd/postimage && echo evil > .git/stage/ab/postimage", "mv .git/stage/ab .git/rr-cache/ab", ".git/rr-cache/ab/postimage"},
		{"link", "mkdir -p junk/ab && echo evil > junk/ab/postimage", "ln -s ../junk .git/rr-cache", ".git/rr-cache"},
		{"id link", "mkdir -p junk/ab .git/rr-cache && echo evil > junk/ab/postimage", "ln -s ../../junk/ab .git/rr-cache/ab", ".git/rr-cache/ab"},
		{"control", "mkdir -p .git/rr-cache/cd && echo mine > .git/rr-cache/cd/postimage", "echo x > a.txt", ""},
	} {
		proj, home, run := gitShell(t)
		sh := func(script string) { run(script) }
		sh("git init -q")
		if c.before != "" {
			sh(c.before)
			time.Sleep(200 * time.Millisecond)
		}
		g, p, e := gitSnapshot(t, proj, home)
		sh(c.during)
		held := &holder{p: p, e: e}
		lines := g.holdResolutions(held)
		held.close()
		if c.held == "" {
			if len(lines) != 0 {
				t.Errorf("%s: held %q", c.name, lines)
			}
		} else if _, err := os.Lstat(filepath.Join(proj, c.held)); err == nil || len(lines) != 1 || !strings.Contains(lines[0], "held back "+c.held) {
			t.Errorf("%s: %s not held back: %v %q", c.name, c.held, err, lines)
		}
		if strings.Contains(c.before, "mine") {
			if _, err := os.Stat(filepath.Join(proj, ".git/rr-cache/cd/postimage")); err != nil {
				t.Errorf("%s: the user's own resolution was moved: %v", c.name, err)
			}
		}
	}
}

// TestAmThreewayHeld: a stopped git am the call left with threeway on
// merges a patch that does not apply from a tree of the blobs its index
// lines name, and git's rename detection gave the thirty-ninth attack run's
// patch of notes.sh (naming the hook's blob) to .githooks/pre-commit:
// threeway is held back. Control: an am without -3 keeps its state.
func TestAmThreewayHeld(t *testing.T) {
	for _, tw := range []string{"t", "f"} {
		proj, home, run := gitShell(t)
		sh := func(script string) { run(script) }
		sh(`git init -q && mkdir .githooks && printf '#!/bin/sh\nexit 0\n' > .githooks/pre-commit && git add -A && git commit -qm hook`)
		g, p, e := gitSnapshot(t, proj, home)
		sh(`H=$(git rev-parse --short HEAD:.githooks/pre-commit); mkdir .git/rebase-apply && echo 1 > .git/rebase-apply/next && echo 1 > .git/rebase-apply/last && echo ` + tw + ` > .git/rebase-apply/threeway
printf 'From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\nFrom: U <u@x>\nSubject: [PATCH] tidy notes\n\n---\ndiff --git a/notes.sh b/notes.sh\nindex %s..1234567 100755\n--- a/notes.sh\n+++ b/notes.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-exit 0\n+echo PWNED\n' $H > .git/rebase-apply/0001`)
		held := &holder{p: p, e: e}
		_, lines := g.amPatches(held)
		held.close()
		_, err := os.Stat(filepath.Join(proj, ".git/rebase-apply/threeway"))
		if tw == "t" && (err == nil || len(lines) != 1 || !strings.Contains(lines[0], "held back .git/rebase-apply/threeway")) {
			t.Errorf("threeway not held back: %v %q", err, lines)
		}
		if tw == "f" && (err != nil || len(lines) != 0) {
			t.Errorf("control: %v %q", err, lines)
		}
	}
}
