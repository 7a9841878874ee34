package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/loopguard/loopguard/cmd/loopguard/internal/cli"
)

// newCompletionCmd replaces cobra's default completion command with one
// that has examples. The scripts complete commands and flags.
func newCompletionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script for bash, zsh, fish or powershell",
		Long: `Print a script that makes your shell complete loopguard's commands and flags.
Load it once per shell, or install it where your shell looks for completions.`,
		Example: `  # bash, this shell only:
  source <(loopguard completion bash)
  # bash, every new shell (needs the bash-completion package):
  loopguard completion bash > ~/.local/share/bash-completion/completions/loopguard

  # zsh (with compinit enabled):
  loopguard completion zsh > "${fpath[1]}/_loopguard"

  # fish:
  loopguard completion fish > ~/.config/fish/completions/loopguard.fish`,
		Args:                  cobra.ExactArgs(1),
		ValidArgs:             []string{"bash", "zsh", "fish", "powershell"},
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			out := cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(out)
			}
			return cli.WithHint(fmt.Errorf("unknown shell %q", args[0]), "use one of: bash, zsh, fish, powershell")
		},
	}
	return cmd
}
