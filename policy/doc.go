// Package policy is the one home of loopguard's security facts: what each
// program can do (shells, interpreters, wrappers, the guard's own tools, and
// per program the options that run code or write files), and which paths
// are protected resources, in two tiers.
//
// It is the bottom layer: shellparse, scope, hooks, install and the CLI ask
// it, and it imports none of them. A fact lives here once; a list of
// program names or protected paths anywhere else is a defect.
//
// The package is silent: it returns values and errors, never prints.
package policy
