// Go's own parser's function declarations, for bench/signatures.py: for each file named on
// stdin (one path a line), one JSON line per function, method and interface method:
// {file, line (1-based, of its name), name, receiver: [{name, type, variadic}],
// parameters: [{name, type, variadic}], results, typeParameters}. A grouped `a, b int` is one
// entry per name, an unnamed `int` one with name null; a variadic `...T` has type T; results
// are written as declared (`(n int, err error)`, `error`), null where there are none; type
// parameters one per declared group (`K, V any`). Texts as written, each run of whitespace one
// space. A file the parser rejects is one line {file, error}.
// Usage: go_signatures < files
package main

import (
	"bufio"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
)

type parameter struct {
	Name     *string `json:"name"`
	Type     string  `json:"type"`
	Variadic bool    `json:"variadic"`
}

type function struct {
	File           string      `json:"file"`
	Line           int         `json:"line"`
	Name           string      `json:"name"`
	Receiver       []parameter `json:"receiver"`
	Parameters     []parameter `json:"parameters"`
	Results        *string     `json:"results"`
	TypeParameters []string    `json:"typeParameters"`
}

type reader struct {
	fset   *token.FileSet
	source []byte
}

// text is a node's source as written, each run of whitespace one space.
func (r reader) text(from, to token.Pos) string {
	start, end := r.fset.Position(from).Offset, r.fset.Position(to).Offset
	return strings.Join(strings.Fields(string(r.source[start:end])), " ")
}

func (r reader) parameters(list *ast.FieldList) []parameter {
	out := []parameter{}
	if list == nil {
		return out
	}
	for _, field := range list.List {
		typ, variadic := field.Type, false
		if ellipsis, ok := typ.(*ast.Ellipsis); ok {
			typ, variadic = ellipsis.Elt, true
		}
		written := r.text(typ.Pos(), typ.End())
		if len(field.Names) == 0 {
			out = append(out, parameter{nil, written, variadic})
		}
		for _, name := range field.Names {
			n := name.Name
			out = append(out, parameter{&n, written, variadic})
		}
	}
	return out
}

func (r reader) results(list *ast.FieldList) *string {
	if list == nil || len(list.List) == 0 {
		return nil
	}
	var written string
	if list.Opening.IsValid() {
		written = r.text(list.Opening, list.Closing+1)
	} else {
		written = r.text(list.Pos(), list.End())
	}
	return &written
}

func (r reader) typeParameters(list *ast.FieldList) []string {
	out := []string{}
	if list == nil {
		return out
	}
	for _, field := range list.List {
		out = append(out, r.text(field.Pos(), field.End()))
	}
	return out
}

func (r reader) emit(out *json.Encoder, file string, name *ast.Ident, recv *ast.FieldList,
	typeParams *ast.FieldList, fn *ast.FuncType) {
	out.Encode(function{
		File: file, Line: r.fset.Position(name.Pos()).Line, Name: name.Name,
		Receiver: r.parameters(recv), Parameters: r.parameters(fn.Params),
		Results: r.results(fn.Results), TypeParameters: r.typeParameters(typeParams),
	})
}

func main() {
	buffered := bufio.NewWriter(os.Stdout)
	writer := json.NewEncoder(buffered)
	defer buffered.Flush()
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		file := lines.Text()
		if file == "" {
			continue
		}
		source, err := os.ReadFile(file)
		if err != nil {
			writer.Encode(map[string]string{"file": file, "error": err.Error()})
			continue
		}
		fset := token.NewFileSet()
		tree, err := parser.ParseFile(fset, file, source, parser.SkipObjectResolution)
		if err != nil {
			writer.Encode(map[string]string{"file": file, "error": err.Error()})
			continue
		}
		r := reader{fset, source}
		ast.Inspect(tree, func(node ast.Node) bool {
			switch n := node.(type) {
			case *ast.FuncDecl:
				r.emit(writer, file, n.Name, n.Recv, n.Type.TypeParams, n.Type)
			case *ast.InterfaceType:
				for _, m := range n.Methods.List {
					if fn, ok := m.Type.(*ast.FuncType); ok && len(m.Names) == 1 {
						r.emit(writer, file, m.Names[0], nil, nil, fn)
					}
				}
			}
			return true
		})
	}
}
