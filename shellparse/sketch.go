package shellparse

// Sketch is what a command string does, as written, whatever its shape:
// every simple command wherever it is nested (a subshell, a function, a
// substitution, a chain), its words after the one quote removal (unquote:
// the words the analysis reads, each expansion written as "$"), and the
// pipelines that connect them. It
// judges nothing; it is for warnings and displays (the danger lines,
// loopguard check). Analyze alone decides.
type Sketch struct {
	Calls [][]string
	// Pipelines are the indexes in Calls of the commands each pipeline
	// connects, left to right.
	Pipelines [][]int
	// Writes are the targets of every redirection that writes a file
	// (>, >>, >|, &>, &>>, <>, >&file), wherever nested, after the one
	// quote removal ("$" for an expansion).
	Writes []string
}

// SketchOf sketches command; ok is false when bash could not parse it.
func SketchOf(command string) (s Sketch, ok bool) {
	defer func() {
		if recover() != nil {
			s, ok = Sketch{}, false
		}
	}()
	if len(command) > MaxCommandLen {
		return Sketch{}, false
	}
	t, err := newTree(command)
	if err != nil {
		return Sketch{}, false
	}
	return t.sketch(), true
}
