// Go ground truth for call resolution, produced by go/types.
//
// Why: knoxidx resolves Go calls statically and cheaply; to measure how often it is right we
// need the type checker that defines the language.  Every package of the corpus is parsed
// and type-checked from source (the corpus's own imports through its go.mod module paths,
// the standard library from the installed Go's export data); a package outside both (a
// module the corpus does not vendor) is missing, and only the sites that need it go
// unattributed.  Only the standard library is used: go/packages is not at hand offline.
//
// Usage (normally driven by go_oracle.py, which builds this program and caches results):
//
//	go_oracle -corpus DIR -files ALL.txt -examine SOME.txt -out OUT.jsonl
//
// ALL.txt lists every repo-relative .go path; SOME.txt those to examine.  Each directory's
// files are checked per package clause (a package with its in-package tests; an external
// `_test` package on its own).  For each examined file the rows are:
//
//	{"kind":"call", path, line, col, name, target_path, target_line, target_name}
//	    one per call whose callee is a function or method declared in the corpus; a method
//	    called through an interface resolves to the interface's method, a promoted method
//	    to its declaration in the embedded type, a generic function's instance to it.
//	    `T{...}` of a struct type T counts as a call of T (knoxidx's `new`).
//	{"kind":"extends", ..., "relation":"extends"}   an embedded struct or interface type of a struct or interface
//	{"kind":"unresolved", path, line, col, name, reason}   "unattributed": the checker could
//	    not tell (a missing import, an error); "redeclared": the target's name is declared
//	    twice in its package (testdata programs side by side); "conversion": `T(x)` converts
//	{"kind":"def", path, line, col, name, def_type}   functions, methods, types
//	{"kind":"file", path, sites, resolved, external, dynamic, errors}   last row of each file
//
// "dynamic" counts calls of a func-typed variable, field or parameter: decided (no declared
// function is called), so a knoxidx edge there is wrong.  line is 1-based; col 0-based in
// bytes; a site's position is its callee name's (`c` in `a.b.c()`), a target's its name's.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type module struct {
	path string // import path of the module
	dir  string // its directory, repo-relative ("" for the root)
}

type oracle struct {
	root     string
	fset     *token.FileSet
	parsed   map[string]*ast.File // repo-relative path -> syntax
	byDir    map[string][]string  // repo-relative dir -> its .go files
	modules  []module
	std      types.Importer
	imported map[string]*types.Package
	loading  map[string]bool
	errors   map[string]int // repo-relative path -> type errors in it
	// import path -> package-level names declared more than once
	redeclared map[string]map[string]bool
}

func main() {
	corpus := flag.String("corpus", "", "corpus directory")
	files := flag.String("files", "", "listing of every .go file")
	examine := flag.String("examine", "", "listing of the files to examine")
	out := flag.String("out", "", "output JSONL")
	flag.Parse()
	if *corpus == "" || *files == "" || *examine == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: go_oracle -corpus DIR -files ALL.txt -examine SOME.txt -out OUT.jsonl")
		os.Exit(2)
	}
	root, err := filepath.Abs(*corpus)
	check(err)
	root, err = filepath.EvalSymlinks(root)
	check(err)
	o := &oracle{root: root, fset: token.NewFileSet(), parsed: map[string]*ast.File{}, byDir: map[string][]string{},
		std: nil, imported: map[string]*types.Package{}, loading: map[string]bool{},
		errors: map[string]int{}, redeclared: map[string]map[string]bool{}}
	all := readList(*files)
	for _, rel := range all {
		f, _ := parser.ParseFile(o.fset, filepath.Join(root, rel), nil, parser.ParseComments)
		if f != nil { // a file that does not parse at all has no package to join
			o.parsed[rel] = f
			o.byDir[filepath.Dir(rel)] = append(o.byDir[filepath.Dir(rel)], rel)
		}
	}
	o.modules = findModules(root)
	// the standard library's export data, decoded into the same file set: positions of one
	// set read against another name arbitrary files of the corpus
	o.std = importer.ForCompiler(o.fset, "gc", nil)

	wanted := map[string]bool{}
	for _, rel := range readList(*examine) {
		wanted[rel] = true
	}
	fh, err := os.Create(*out)
	check(err)
	w := bufio.NewWriter(fh)
	dirs := make([]string, 0, len(o.byDir))
	for dir := range o.byDir {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		groups := map[string][]string{}
		for _, rel := range o.byDir[dir] {
			if wanted[rel] {
				name := o.parsed[rel].Name.Name
				groups[name] = append(groups[name], rel)
			}
		}
		names := make([]string, 0, len(groups))
		for name := range groups {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			o.examinePackage(w, dir, name, groups[name])
			for _, rel := range groups[name] {
				delete(wanted, rel)
			}
		}
	}
	left := make([]string, 0, len(wanted))
	for rel := range wanted {
		left = append(left, rel)
	}
	sort.Strings(left)
	for _, rel := range left { // a file with no package clause to check it in
		(&fileScan{o: o, w: w, rel: rel}).emit(map[string]any{"kind": "file", "path": rel, "sites": 0,
			"resolved": 0, "external": 0, "dynamic": 0, "errors": 1})
	}
	check(w.Flush())
	check(fh.Close())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "go_oracle:", err)
		os.Exit(1)
	}
}

func readList(path string) []string {
	data, err := os.ReadFile(path)
	check(err)
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// findModules reads the module path of every go.mod of the corpus.
func findModules(root string) []module {
	var mods []module
	_ = filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || info.Name() != "go.mod" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) >= 2 && fields[0] == "module" {
				rel, _ := filepath.Rel(root, filepath.Dir(path))
				if rel == "." {
					rel = ""
				}
				mods = append(mods, module{path: strings.Trim(fields[1], `"`), dir: rel})
			}
		}
		return nil
	})
	// the longest module path first: a nested module owns its subtree
	sort.Slice(mods, func(i, j int) bool { return len(mods[i].path) > len(mods[j].path) })
	return mods
}

// corpusDir maps an import path to a directory of the corpus, if a module of it owns the path.
func (o *oracle) corpusDir(importPath string) (string, bool) {
	for _, m := range o.modules {
		if importPath == m.path || strings.HasPrefix(importPath, m.path+"/") {
			dir := filepath.Join(m.dir, strings.TrimPrefix(strings.TrimPrefix(importPath, m.path), "/"))
			if dir == "" {
				dir = "."
			}
			_, ok := o.byDir[dir]
			return dir, ok
		}
	}
	return "", false
}

// Import type-checks a corpus package (its non-test files for this platform) or reads a
// standard one; anything else is missing.
func (o *oracle) Import(path string) (*types.Package, error) {
	if pkg, ok := o.imported[path]; ok {
		if pkg == nil {
			return nil, fmt.Errorf("%s: could not be loaded", path)
		}
		return pkg, nil
	}
	dir, ok := o.corpusDir(path)
	if !ok {
		pkg, err := o.std.Import(path)
		if err != nil {
			o.imported[path] = nil
			return nil, err
		}
		o.imported[path] = pkg
		return pkg, nil
	}
	if o.loading[path] {
		return nil, fmt.Errorf("%s: import cycle", path)
	}
	o.loading[path] = true
	defer delete(o.loading, path)
	var files []*ast.File
	counts := map[string]int{}
	for _, rel := range o.byDir[dir] {
		base := filepath.Base(rel)
		if strings.HasSuffix(base, "_test.go") {
			continue
		}
		if match, err := build.Default.MatchFile(filepath.Join(o.root, dir), base); err != nil || !match {
			continue
		}
		files = append(files, o.parsed[rel])
		counts[o.parsed[rel].Name.Name]++
	}
	// the package the directory mostly declares (a stray `package main` generator aside)
	best := ""
	for name, n := range counts {
		if name != "main" && (best == "" || n > counts[best] || (n == counts[best] && name < best)) {
			best = name
		}
	}
	var chosen []*ast.File
	for _, f := range files {
		if f.Name.Name == best {
			chosen = append(chosen, f)
		}
	}
	conf := types.Config{Importer: o, Error: func(err error) { o.noteRedeclared(path, err) }, FakeImportC: true}
	pkg, _ := conf.Check(path, o.fset, chosen, nil)
	o.imported[path] = pkg
	return pkg, nil
}

func (o *oracle) importPathOf(dir string) string {
	for _, m := range o.modules {
		if m.dir == "" || dir == m.dir || strings.HasPrefix(dir, m.dir+string(filepath.Separator)) {
			rel := strings.TrimPrefix(strings.TrimPrefix(dir, m.dir), string(filepath.Separator))
			if rel == "." || rel == "" {
				return m.path
			}
			return m.path + "/" + filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(dir)
}

func (o *oracle) examinePackage(w *bufio.Writer, dir, name string, rels []string) {
	sort.Strings(rels)
	files := make([]*ast.File, len(rels))
	for i, rel := range rels {
		files[i] = o.parsed[rel]
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{},
		Defs: map[*ast.Ident]types.Object{}}
	path := o.importPathOf(dir)
	if strings.HasSuffix(name, "_test") {
		path += "_test"
	}
	conf := types.Config{Importer: o, FakeImportC: true, Error: func(err error) {
		if te, ok := err.(types.Error); ok {
			o.errors[o.rel(te.Fset.Position(te.Pos).Filename)]++
		}
		o.noteRedeclared(path, err)
	}}
	_, _ = conf.Check(path, o.fset, files, info)
	for i, rel := range rels {
		o.examineFile(w, rel, files[i], info)
	}
}

func (o *oracle) noteRedeclared(path string, err error) {
	te, ok := err.(types.Error)
	if !ok || !strings.HasSuffix(te.Msg, " redeclared in this block") {
		return
	}
	if o.redeclared[path] == nil {
		o.redeclared[path] = map[string]bool{}
	}
	o.redeclared[path][strings.TrimSuffix(te.Msg, " redeclared in this block")] = true
}

func (o *oracle) rel(filename string) string {
	rel, err := filepath.Rel(o.root, filename)
	if err != nil || strings.HasPrefix(rel, "..") {
		return ""
	}
	return filepath.ToSlash(rel)
}

type fileScan struct {
	o                                  *oracle
	w                                  *bufio.Writer
	rel                                string
	info                               *types.Info
	sites, resolved, external, dynamic int
}

func (o *oracle) examineFile(w *bufio.Writer, rel string, f *ast.File, info *types.Info) {
	s := &fileScan{o: o, w: w, rel: rel, info: info}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			s.call(n)
		case *ast.CompositeLit:
			s.construction(n)
		case *ast.FuncDecl:
			kind := "function"
			if n.Recv != nil {
				kind = "method"
			}
			s.def(n.Name, kind)
		case *ast.TypeSpec:
			s.def(n.Name, "type")
			s.embedded(n.Type)
		}
		return true
	})
	s.emit(map[string]any{"kind": "file", "path": rel, "sites": s.sites, "resolved": s.resolved,
		"external": s.external, "dynamic": s.dynamic, "errors": o.errors[rel]})
}

// calleeName is the identifier naming what a call calls, if it has one.
func calleeName(fun ast.Expr) *ast.Ident {
	for {
		switch e := fun.(type) {
		case *ast.ParenExpr:
			fun = e.X
		case *ast.IndexExpr: // f[int](x): an instantiation
			fun = e.X
		case *ast.IndexListExpr:
			fun = e.X
		case *ast.Ident:
			return e
		case *ast.SelectorExpr:
			return e.Sel
		default:
			return nil // a function literal, a call's result ...
		}
	}
}

func (s *fileScan) call(call *ast.CallExpr) {
	id := calleeName(call.Fun)
	if id == nil {
		return
	}
	s.sites++
	if tv, ok := s.info.Types[call.Fun]; ok && tv.IsType() {
		s.resolved++
		s.site("unresolved", id, map[string]any{"reason": "conversion"})
		return
	}
	obj := s.info.Uses[id]
	switch obj := obj.(type) {
	case *types.Func:
		s.resolved++
		if s.redeclared(obj) {
			s.site("unresolved", id, map[string]any{"reason": "redeclared"})
		} else if !s.link("call", id, obj) {
			s.external++
		}
	case *types.Builtin:
		s.resolved++
		s.external++
	case *types.Var:
		s.resolved++
		s.dynamic++
	default:
		s.site("unresolved", id, map[string]any{"reason": "unattributed"})
	}
}

// construction reports `T{...}` of a struct type T as a call of T: knoxidx links it so, as
// it links `new T()` in Java and TypeScript.
func (s *fileScan) construction(lit *ast.CompositeLit) {
	if lit.Type == nil {
		return // an element of an enclosing literal: `[]T{{...}}`
	}
	id := calleeName(lit.Type)
	if id == nil {
		return // `[]T{}`, `map[K]V{}`, `struct{...}{}`
	}
	obj, ok := s.info.Uses[id].(*types.TypeName)
	if !ok {
		if s.info.Uses[id] == nil {
			s.sites++
			s.site("unresolved", id, map[string]any{"reason": "unattributed"})
		}
		return
	}
	if _, isStruct := obj.Type().Underlying().(*types.Struct); !isStruct {
		return // a slice or map type's literal: the knoxidx node is no class either
	}
	s.sites++
	s.resolved++
	if s.redeclared(obj) {
		s.site("unresolved", id, map[string]any{"reason": "redeclared"})
	} else if !s.link("call", id, obj) {
		s.external++
	}
}

// redeclared says whether obj is a package-level name declared twice: a directory of
// stand-alone programs (testdata), or files for different platforms; the checker keeps the
// first declaration, which need not be the one a given use means.
func (s *fileScan) redeclared(obj types.Object) bool {
	return obj.Pkg() != nil && obj.Parent() == obj.Pkg().Scope() && s.o.redeclared[obj.Pkg().Path()][obj.Name()]
}

// embedded reports the embedded fields of a struct or interface type as its bases.
func (s *fileScan) embedded(expr ast.Expr) {
	var fields *ast.FieldList
	switch t := expr.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	}
	if fields == nil {
		return
	}
	for _, field := range fields.List {
		if len(field.Names) > 0 {
			continue
		}
		typ := field.Type
		if star, ok := typ.(*ast.StarExpr); ok {
			typ = star.X
		}
		id := calleeName(typ)
		if id == nil {
			continue // a union or `~T` of a constraint
		}
		used := s.info.Uses[id]
		if used == nil {
			continue
		}
		if s.redeclared(used) {
			// the checker kept the first declaration, perhaps no struct or interface at all
			// (`type I int` in a program beside this one): which one is meant, it cannot say
			s.site("unresolved", id, map[string]any{"reason": "redeclared"})
			continue
		}
		obj, ok := used.(*types.TypeName)
		if !ok {
			continue
		}
		switch obj.Type().Underlying().(type) {
		case *types.Struct, *types.Interface:
			s.link("extends", id, obj, "relation", "extends")
		} // `type Kind uint32` embedded: knoxidx's node for it is no class
	}
}

// link writes a row from the site “id“ to “obj“ if obj is declared in the corpus.
func (s *fileScan) link(kind string, id *ast.Ident, obj types.Object, extra ...string) bool {
	if !obj.Pos().IsValid() {
		return false
	}
	pos := s.o.fset.Position(obj.Pos())
	target := s.o.rel(pos.Filename)
	if target == "" {
		return false
	}
	fields := map[string]any{"target_path": target, "target_line": pos.Line, "target_name": obj.Name()}
	for i := 0; i+1 < len(extra); i += 2 {
		fields[extra[i]] = extra[i+1]
	}
	s.site(kind, id, fields)
	return true
}

func (s *fileScan) def(id *ast.Ident, kind string) {
	if id.Name != "_" {
		s.site("def", id, map[string]any{"def_type": kind})
	}
}

func (s *fileScan) site(kind string, id *ast.Ident, fields map[string]any) {
	pos := s.o.fset.Position(id.Pos())
	row := map[string]any{"kind": kind, "path": s.rel, "line": pos.Line, "col": pos.Column - 1, "name": id.Name}
	for k, v := range fields {
		row[k] = v
	}
	s.emit(row)
}

func (s *fileScan) emit(row map[string]any) {
	data, err := json.Marshal(row)
	check(err)
	_, _ = s.w.Write(data)
	_ = s.w.WriteByte('\n')
}
