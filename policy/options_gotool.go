package policy

import (
	"fmt"
	"strings"
)

// The flags go build passes on to its tools: -ldflags to go tool link,
// -gcflags to go tool compile, -asmflags to go tool asm. Their value is
// "[pattern=]flags", and the tools write and run what their flags say:
// -ldflags=-o=../x links the binary to ../x (after go's own -o, so it
// wins), -gcflags=-o=../x writes the object file there, -ldflags=-extld=sh
// runs sh. Each tool's flags are listed here by what they do; a flag not
// listed is not known to be safe. TestGoToolFlagsAgainstTools checks the
// lists against the tools' own -help.

// linkFlags, compileFlags and asmFlags are built with go's option table
// (goTools).
var linkFlags, compileFlags, asmFlags *table

func buildGoTools() {
	linkFlags = goTool("go tool link", `
		safe: -s -w -X= -buildid= -v -race -msan -asan -compressdwarf -strictdups= -checklinkname
			-bindnow -aslr -pruneweakmap -randlayout= -funcalign= -dumpdep -c -e -g -h -B= -benchmark=
			-memprofilerate= -debugtextsize= -debugtramp= -debugnosplit ;
		writes: -o= -cpuprofile= -memprofile= -benchmarkprofile= -capturehostobjs= -tmpdir= -fipso= ;
		code: -extld= -extldflags= -linkmode= -extar= -I= -r= -L= -importcfg= -installsuffix= -libgcc=`,
		map[string]string{
			"-o":          "go tool link -o writes the linked binary to the named file",
			"-tmpdir":     "go tool link -tmpdir writes its temporary files in the named directory",
			"-extld":      "go tool link -extld runs the named program as the linker",
			"-extldflags": "go tool link -extldflags passes flags to the external linker (plugins, scripts)",
			"-linkmode":   "go tool link -linkmode=external runs the external linker",
			"-extar":      "go tool link -extar runs the named archiver",
			"-I":          "go tool link -I names the program the binary's loader runs",
			"-r":          "go tool link -r makes the binary load libraries from the named directories",
			"-L":          "go tool link -L links packages from another directory",
			"-importcfg":  "go tool link -importcfg links packages from other files",
			"-libgcc":     "go tool link -libgcc links the named library",
		})
	compileFlags = goTool("go tool compile", `
		safe: -N -l -m -S -B -C -e -h -L -W -w -v -j -r -K -E -t -race -msan -asan -trimpath= -spectre=
			-lang= -c= -smallframes -live -wb -dwarf -dwarflocationlists -dwarfbasentries -gendwarfinl=
			-clobberdead -clobberdeadreg -errorurl -buildid= -goversion= ;
		writes: -o= -asmhdr= -bench= -blockprofile= -cpuprofile= -memprofile= -mutexprofile= -traceprofile=
			-linkobj= -json= ;
		code: -importcfg= -I= -D= -embedcfg= -installsuffix= -symabis= -coveragecfg= -pgoprofile=`,
		map[string]string{
			"-o":         "go tool compile -o writes the object file to the named file",
			"-importcfg": "go tool compile -importcfg compiles against packages from other files",
			"-I":         "go tool compile -I imports packages from another directory",
			"-embedcfg":  "go tool compile -embedcfg embeds the files it names",
		})
	asmFlags = goTool("go tool asm", `
		safe: -S -V -debug -e -v -dynlink -shared -linkshared -spectre= -trimpath= -p= -D= ;
		writes: -o= ;
		code: -I=`,
		map[string]string{
			"-o": "go tool asm -o writes the object file to the named file",
			"-I": "go tool asm -I includes files from another directory",
		})
}

func goTool(name, spec string, whys map[string]string) *table {
	t := parseTable(name, spec, whys)
	t.goStyle = true
	return t
}

// lookup finds a go-style flag (-name or --name, without its value).
func (t *table) lookup(name string) (opt, bool) {
	name = strings.TrimLeft(name, "-")
	if len(name) == 1 {
		o, ok := t.short[name[0]]
		return o, ok
	}
	o, ok := t.long["-"+name]
	return o, ok
}

// goToolFlags classes the value of -ldflags, -gcflags or -asmflags, read as
// go reads it ("[pattern=]flags", the flags split at spaces outside quotes)
// and as the tool's flag package reads the flags: the worst flag decides.
// What cannot be read so is not known to be safe.
func goToolFlags(tool *table, v string) (OptionClass, string) {
	unknown := func(what string) (OptionClass, string) {
		return Unknown, fmt.Sprintf("this option %s: %s %s", Unknown, tool.name, what)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return Safe, ""
	}
	if v[0] != '-' {
		// pattern=flags (all=-N -l)
		i := strings.IndexByte(v, '=')
		if i <= 0 || v[0] == '\'' || v[0] == '"' {
			return unknown(fmt.Sprintf("cannot read %q as [pattern=]flags", v))
		}
		v = v[i+1:]
	}
	args, ok := splitQuoted(v)
	if !ok {
		return unknown(fmt.Sprintf("cannot split %q", v))
	}
	worst, why := Safe, ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			// The tool stops reading flags: the rest are files.
			return unknown(fmt.Sprintf("reads %q as a file, not a flag", a))
		}
		name, _, hasVal := strings.Cut(a, "=")
		o, ok := tool.lookup(name)
		if !ok {
			return unknown(name)
		}
		if o.value && !hasVal {
			i++ // -o file
		}
		if o.class > worst {
			worst = o.class
			why = fmt.Sprintf("this option %s: %s %s", o.class, tool.name, name)
			if o.why != "" {
				why = "this option " + o.class.String() + ": " + o.why
			}
		}
	}
	return worst, why
}

// splitQuoted splits s as go splits -ldflags (cmd/internal/quoted.Split):
// at spaces, tabs and newlines; a field that starts with ' or " runs to the
// same quote, with no escapes (a quote inside a field is a letter). A quote
// that does not close fails.
func splitQuoted(s string) ([]string, bool) {
	var out []string
	for {
		s = strings.TrimLeft(s, " \t\n\r")
		if s == "" {
			return out, true
		}
		if s[0] == '\'' || s[0] == '"' {
			end := strings.IndexByte(s[1:], s[0])
			if end < 0 {
				return nil, false
			}
			out = append(out, s[1:1+end])
			s = s[2+end:]
			continue
		}
		end := strings.IndexAny(s, " \t\n\r")
		if end < 0 {
			end = len(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
}
