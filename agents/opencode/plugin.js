// loopguard: OpenCode plugin, written by `loopguard init --agent opencode`.
// It asks loopguard's hook about every tool call before it runs and blocks
// it on anything but an allow, and reports each call after it ran. Do not
// edit it: `loopguard doctor --agent opencode` compares it with what init
// writes, and `loopguard uninstall --agent opencode` removes it.
const HOOK = __HOOK__
const MODE = __MODE__
const TIMEOUT_MS = __TIMEOUT_MS__

import { spawn } from "node:child_process"

const FAILED = __FAILED__

// The configuration OpenCode runs with, every file and variable merged
// (its config hook): the hook checks that its shell is loopguard's wrapper.
let CONFIG = null
const shell = () => (CONFIG && typeof CONFIG.shell === "string" ? CONFIG.shell : "")

// ask runs the hook for one event and returns its answer; every failure
// (it cannot start, it times out, it answers nothing readable) is a deny.
function ask(event, payload, directory) {
  return new Promise((resolve) => {
    let out = ""
    let settled = false
    const done = (a) => {
      if (!settled) {
        settled = true
        resolve(a)
      }
    }
    let child
    try {
      child = spawn(HOOK, __ARGS__, {
        stdio: ["pipe", "pipe", "ignore"],
        env: { ...process.env, CLAUDE_PROJECT_DIR: directory },
      })
    } catch (e) {
      return done({ decision: "deny", reason: FAILED + " (" + String(e) + ")" })
    }
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL")
      } catch {}
      done({ decision: "deny", reason: FAILED + " (no answer within " + TIMEOUT_MS + " ms)" })
    }, TIMEOUT_MS)
    child.on("error", (e) => {
      clearTimeout(timer)
      done({ decision: "deny", reason: FAILED + " (" + String(e) + ")" })
    })
    child.stdout.on("data", (b) => {
      out += b
    })
    child.on("close", () => {
      clearTimeout(timer)
      try {
        const a = JSON.parse(out)
        if (a && typeof a.decision === "string") return done(a)
      } catch {}
      done({ decision: "deny", reason: FAILED })
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(payload))
  })
}

export const Loopguard = async ({ directory }) => ({
  config: async (cfg) => {
    CONFIG = cfg
  },
  "tool.execute.before": async (input, output) => {
    const a = await ask("tool.execute.before", {
      event: "tool.execute.before", session_id: input.sessionID, call_id: input.callID,
      tool: input.tool, args: output.args, directory, shell: shell(),
    }, directory)
    if (a.decision !== "allow") throw new Error(typeof a.reason === "string" && a.reason ? a.reason : FAILED)
    if (a.args && typeof a.args === "object") {
      // Run what loopguard analysed: the canonical command, in place of the model's.
      for (const k of Object.keys(output.args)) if (!(k in a.args)) delete output.args[k]
      Object.assign(output.args, a.args)
    }
  },
  "tool.execute.after": async (input, output) => {
    const a = await ask("tool.execute.after", {
      event: "tool.execute.after", session_id: input.sessionID, call_id: input.callID,
      tool: input.tool, args: input.args, directory,
      output: output && typeof output.output === "string" ? output.output : "",
    }, directory)
    if (a.decision === "alarm" && typeof a.reason === "string" && output && typeof output.output === "string") {
      output.output = a.reason + "\n\n" + output.output
    }
  },
})
