package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/present"
	"github.com/loopguard/loopguard/state"
)

// resolvePending turns a unique prefix of a pending id into the id.
func resolvePending(st *state.Store, arg string) (string, error) {
	id, err := st.ResolvePending(arg)
	if err != nil {
		return "", withHint(err, "list pending calls with: loopguard pending")
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

// completePending offers the open pending calls' ids, with their summary.
func completePending(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	st, err := openStore()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, _ := st.ListPending()
	var out []string
	for _, p := range list {
		if p.Status == state.StatusOpen && strings.HasPrefix(p.ID, toComplete) {
			out = append(out, p.ID+"\t"+present.Summary(p))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeGrants offers the live grants' ids, with their scope.
func completeGrants(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	st, err := openStore()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	all, _ := st.AllGrants()
	var out []string
	for _, gf := range all {
		if gf.Grant != nil && strings.HasPrefix(gf.Grant.ID(), toComplete) {
			out = append(out, gf.Grant.ID()+"\t"+present.EscapeText(gf.Grant.Scope))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
