package scope

import "strings"

const maxMCPName = 256

func isMCPNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// parseMCP parses mcp__<server>__<tool>, mcp__<server>__<prefix>* and
// mcp__<server> (all of the server's tools, as in Claude Code; canonically
// mcp__<server>__*). The server name contains no "__"; the first "__" after
// "mcp__" ends it. Only the tool part may end with a *.
func parseMCP(rule string) (Rule, error) {
	if len(rule) > maxMCPName {
		return Rule{}, perr(rule, maxMCPName, "MCP rule longer than %d bytes", maxMCPName)
	}
	body := rule[len("mcp__"):]
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '*' && i == len(body)-1 {
			break
		}
		if c == '(' {
			return Rule{}, perr(rule, 5+i, "MCP rules take no specifier")
		}
		if !isMCPNameChar(c) {
			return Rule{}, perr(rule, 5+i, "unexpected %q in MCP tool name (only a trailing * on the tool part)", c)
		}
	}
	server, tool, found := strings.Cut(body, "__")
	if server == "" || strings.HasPrefix(server, "_") || strings.HasSuffix(server, "_") {
		return Rule{}, perr(rule, 5, "missing or malformed MCP server name")
	}
	if strings.HasSuffix(server, "*") {
		return Rule{}, perr(rule, 5+len(server)-1, "wildcards are allowed on the tool part only")
	}
	r := Rule{kind: kindMCP, mcpServer: server}
	switch {
	case !found:
		r.mcpWild = true
	case tool == "":
		return Rule{}, perr(rule, len(rule), "missing MCP tool name (write mcp__%s__* for all its tools)", server)
	case strings.HasSuffix(tool, "*"):
		r.mcpWild = true
		r.mcpTool = tool[:len(tool)-1]
	default:
		r.mcpTool = tool
	}
	if strings.Contains(r.mcpTool, "__") && r.mcpWild {
		return Rule{}, perr(rule, 5+len(server)+2, "a wildcard tool prefix may not contain \"__\"")
	}
	r.tool = r.String()
	if len(r.tool) > maxMCPName {
		return Rule{}, perr(rule, 0, "MCP rule longer than %d bytes in canonical form", maxMCPName)
	}
	return r, nil
}

// matchMCPName reports whether the tool name is covered by the MCP rule.
// With a wildcard, the rest of the name after the prefix must not contain
// "__", so mcp__a__* cannot reach a server named "a__b".
func (r Rule) matchMCPName(name string) bool {
	pfx := "mcp__" + r.mcpServer + "__"
	if len(name) > maxMCPName || !strings.HasPrefix(name, pfx) {
		return false
	}
	rest := name[len(pfx):]
	if rest == "" {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if !isMCPNameChar(rest[i]) {
			return false
		}
	}
	if !r.mcpWild {
		return rest == r.mcpTool
	}
	return strings.HasPrefix(rest, r.mcpTool) && !strings.Contains(rest, "__")
}
