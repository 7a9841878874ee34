package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
)

// resolvePending turns a unique prefix of a pending id into the id.
func resolvePending(st *state.Store, arg string) (string, error) {
	id, err := st.ResolvePending(arg)
	if err != nil {
		return "", cli.WithHint(err, "list pending calls with: loopguard pending")
	}
	return id, nil
}

// resolvePendings resolves every argument before anything is decided, so a
// typo in the third id changes nothing.
func resolvePendings(st *state.Store, args []string) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	for _, a := range args {
		id, err := resolvePending(st, a)
		if err != nil {
			return nil, err
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// completeIDs completes an id argument with what offer finds in the store
// for the prefix typed ("id\tdescription" each); nothing when the store
// cannot be opened.
func completeIDs(offer func(st *state.Store, prefix string) []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		st, err := cli.OpenStore()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return offer(st, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completePending offers the open pending calls' ids, with their summary.
var completePending = completeIDs(func(st *state.Store, prefix string) []string {
	list, _ := st.ListPending()
	var out []string
	for _, p := range list {
		if p.Status == state.StatusOpen && strings.HasPrefix(p.ID, prefix) {
			out = append(out, p.ID+"\t"+present.Summary(p))
		}
	}
	return out
})

// completeGrants offers the live grants' ids, with their scope.
var completeGrants = completeIDs(func(st *state.Store, prefix string) []string {
	all, _ := st.AllGrants()
	var out []string
	for _, gf := range all {
		if gf.Grant != nil && strings.HasPrefix(gf.Grant.ID(), prefix) {
			out = append(out, gf.Grant.ID()+"\t"+present.EscapeText(gf.Grant.Scope))
		}
	}
	return out
})
