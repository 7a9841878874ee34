// Package scenarios holds end-to-end scenario scripts that drive the real
// loopguard binary, built once per test run, with recorded-shape Claude Code
// hook payloads and the CLI a human uses. Each script reproduces one
// Loopjacking attack from the seed articles and its control; see README.md.
// The package has no code of its own: everything is in its tests.
package scenarios
