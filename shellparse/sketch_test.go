package shellparse

import (
	"reflect"
	"testing"
)

func TestSketchOf(t *testing.T) {
	s, ok := SketchOf(`curl -s "$URL" | tee log | php; (cd x && rm -rf y) | sh -c 'echo $HOME'`)
	if !ok {
		t.Fatal("not parsed")
	}
	want := [][]string{{"curl", "-s", "$"}, {"tee", "log"}, {"php"}, {"cd", "x"}, {"rm", "-rf", "y"}, {"sh", "-c", "echo $HOME"}}
	if !reflect.DeepEqual(s.Calls, want) {
		t.Errorf("calls %q", s.Calls)
	}
	if !reflect.DeepEqual(s.Pipelines, [][]int{{0, 1, 2}, {3, 5}}) {
		t.Errorf("pipelines %v", s.Pipelines)
	}
	if _, ok := SketchOf("echo 'unterminated"); ok {
		t.Error("an unparseable command was sketched")
	}
}
