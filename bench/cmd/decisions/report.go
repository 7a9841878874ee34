package main

import (
	"fmt"
	"sort"
	"strings"
)

// markdown renders the report as tables BENCH.md or an issue can quote.
func markdown(r *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Human decisions per 100 Bash calls\n\n")
	fmt.Fprintf(&b, "Corpus `%s`: %d distinct Bash commands from %d sources", r.Corpus, r.Entries, r.Sources)
	if r.Skipped > 0 {
		fmt.Fprintf(&b, " (%d more, logged as run by PowerShell, left out)", r.Skipped)
	}
	fmt.Fprintf(&b, "; agents: %s.\n\n", counts(r.Agents, 0))
	b.WriteString("| grant set | commands | calls | decisions | per 100 calls | per 100 if each part of a chain were judged alone |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|\n")
	for _, x := range r.Results {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | **%.1f** | %.1f |\n", setName(x), mode(x), x.Calls, x.Held, x.Per100, x.Compound.Per100IfCovered)
	}
	b.WriteString("\n*as sent*: each command's text as the agent sent it, run at the root of the fixture's project. " +
		"*rebased*: the agent's logged working directory replaced by the project in the command's text (commands without a logged cwd unchanged), " +
		"so that a path in the agent's project is in the project here too.\n")
	for _, x := range r.Results {
		fmt.Fprintf(&b, "\n### %s, %s\n\n", setName(x), mode(x))
		if len(x.Minted.Skipped) > 0 {
			var s []string
			for rule, why := range x.Minted.Skipped {
				s = append(s, fmt.Sprintf("`%s` (%s)", rule, why))
			}
			sort.Strings(s)
			fmt.Fprintf(&b, "Not granted here: %s.\n\n", strings.Join(s, "; "))
		}
		b.WriteString("| reason code | decisions | share |\n|---|---:|---:|\n")
		for _, c := range ranked(x.ByReason) {
			fmt.Fprintf(&b, "| %s | %d | %.0f%% |\n", c.Name, c.N, pct(c.N, x.Held))
		}
		b.WriteString("\n| agent | calls | decisions | per 100 |\n|---|---:|---:|---:|\n")
		var agents []string
		for a := range x.ByAgent {
			agents = append(agents, a)
		}
		sort.Strings(agents)
		for _, a := range agents {
			v := x.ByAgent[a]
			fmt.Fprintf(&b, "| %s | %d | %d | %.1f |\n", a, v[0], v[1], pct(v[1], v[0]))
		}
		b.WriteString("\nWhat costs the most decisions (the first program of a held simple command, with its subcommand where it names the action; every held chain as `(compound)`):\n\n")
		b.WriteString("| program | decisions |\n|---|---:|\n")
		for _, c := range head(x.TopHeld, 25) {
			fmt.Fprintf(&b, "| `%s` | %d |\n", c.Name, c.N)
		}
		c := x.Compound
		fmt.Fprintf(&b, "\nCompound commands: %d of %d calls (%.0f%%), %d held. Of the held, %d can be cut into simple parts "+
			"(the rest: %s); %d of those would pass if each part were judged alone with these grants (a `cd` inside the "+
			"project and out of `.git` allowed, redirections to the terminal or `/dev/null` left out): **%.1f** decisions per 100 calls instead of %.1f.\n",
			c.Total, x.Calls, pct(c.Total, x.Calls), c.Held, c.Splittable, counts(ranked(c.NotSplittable), 0), c.Covered,
			c.Per100IfCovered, x.Per100)
		if len(c.Blockers) > 0 {
			fmt.Fprintf(&b, "\nThe parts that still hold the other splittable chains (a program counted once a chain): %s.\n", counts(c.Blockers, 20))
		}
	}
	fmt.Fprintf(&b, "\n### Shape of the corpus\n\n%s.\n", counts(r.Shape, 0))
	if r.Landlock {
		b.WriteString("\nThis kernel has Landlock: a scoped call is rewritten to run through the launcher, as on a user's Linux machine.\n")
	} else {
		b.WriteString("\nThis kernel has no Landlock (ABI 4 or later): a scoped call is rewritten to its canonical form and runs unconfined.\n")
	}
	fmt.Fprintf(&b, "\nPrograms: %d names resolved to this machine's programs, %d to stubs in a trusted directory, %d are bash builtins. Stubs: %s.\n",
		len(r.Real), len(r.Stubbed), len(r.Builtin), list(r.Stubbed, 60))
	if len(r.NpxInstalled) > 0 {
		fmt.Fprintf(&b, "The packages run through npx (bunx, npm exec...) are installed in the project's node_modules/.bin (%d: %s), as the programs are on PATH; -npx-absent measures them absent.\n", len(r.NpxInstalled), list(r.NpxInstalled, 30))
	} else {
		b.WriteString("No package run through npx is installed in the project: each such call needs the network.\n")
	}
	return b.String()
}

func setName(x *Result) string {
	name := "read-only preset"
	if len(x.Set.Rules) > 0 {
		name += " + " + strings.Join(x.Set.Rules, ", ")
	}
	return name
}

func mode(x *Result) string {
	if x.Rebased {
		return "rebased"
	}
	return "as sent"
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

func head(c []Count, n int) []Count {
	if len(c) > n {
		return c[:n]
	}
	return c
}

// counts renders "name n, name n"; max 0 means all.
func counts(c []Count, max int) string {
	if max > 0 {
		c = head(c, max)
	}
	var s []string
	for _, x := range c {
		s = append(s, fmt.Sprintf("%s %d", x.Name, x.N))
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func list(s []string, max int) string {
	if len(s) == 0 {
		return "none"
	}
	if len(s) > max {
		return strings.Join(s[:max], " ") + fmt.Sprintf(" … (%d more)", len(s)-max)
	}
	return strings.Join(s, " ")
}
