// Java ground truth for call resolution, produced by javac's own attribution.
//
// Why: knoxidx resolves Java calls statically and cheaply; to measure how often it is right
// we need the resolver that defines the language -- javac's.  All sources of a corpus are
// compiled as one program (attribution and flow only, no class files), outside libraries
// that are missing are tolerated, and every method invocation, `new` expression and
// extends/implements clause is asked what it denotes (com.sun.source.util.Trees).
//
// Usage (normally driven by java_oracle.py, which compiles this file and caches results):
//
//   java JavaOracle --corpus DIR --files ALL.txt --examine SOME.txt --out OUT.jsonl
//
// ALL.txt lists every repo-relative .java path to compile, SOME.txt those to examine.  A
// corpus whose packages belong to a module of the running JDK (java.time in java.base,
// com.sun.tools.javac in jdk.compiler) is compiled as a patch of that module, so its
// sources replace the JDK's own classes.  For each examined file the rows are:
//
//   {"kind":"call", path, line, col, name, target_path, target_line, target_name}
//       one per invocation or `new` whose declaration is in the corpus.  A constructor maps
//       to its class (`new T()`, `super(..)`, `this(..)` call the class, as knoxidx links
//       them); an anonymous class's `new` to the class or interface it extends.
//   {"kind":"extends", ..., "relation":"extends"|"implements"}   a class's supertypes
//   {"kind":"unresolved", path, line, col, name, reason}   a site javac could not attribute
//   {"kind":"def", path, line, col, name, def_type}   classes, methods and constructors
//   {"kind":"file", path, sites, resolved, external, errors}   last row of each file
//
// line is 1-based; col 0-based in chars; a site's line and col are those of the callee's
// name as written (`c` in `a.b.c()`, `T` in `new p.T()`), a target's those of its
// declaration's name.

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.ExpressionTree;
import com.sun.source.tree.IdentifierTree;
import com.sun.source.tree.MemberSelectTree;
import com.sun.source.tree.MethodInvocationTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.NewClassTree;
import com.sun.source.tree.ParameterizedTypeTree;
import com.sun.source.tree.AnnotatedTypeTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreePath;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;
import com.sun.tools.javac.code.Flags;
import com.sun.tools.javac.tree.JCTree;

import java.io.BufferedWriter;
import java.io.IOException;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.ExecutableElement;
import javax.lang.model.element.NestingKind;
import javax.lang.model.element.TypeElement;
import javax.lang.model.type.TypeKind;
import javax.lang.model.type.TypeMirror;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public final class JavaOracle {
    private static final Pattern PACKAGE = Pattern.compile("^\\s*package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);

    private final Path root;
    private final Trees trees;
    private final SourcePositions positions;
    private final Map<String, Integer> errorsByFile;
    private final BufferedWriter out;

    private JavaOracle(Path root, JavacTask task, Map<String, Integer> errorsByFile, BufferedWriter out) {
        this.root = root;
        this.trees = Trees.instance(task);
        this.positions = trees.getSourcePositions();
        this.errorsByFile = errorsByFile;
        this.out = out;
    }

    public static void main(String[] args) throws IOException {
        Map<String, String> opts = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            opts.put(args[i], args[i + 1]);
        }
        Path root = Path.of(opts.get("--corpus")).toRealPath();
        List<String> all = readList(Path.of(opts.get("--files")));
        Set<String> examine = new TreeSet<>(readList(Path.of(opts.get("--examine"))));

        String module = owningModule(root, all);
        List<String> options = new ArrayList<>(List.of(
                "-proc:none", "-encoding", "UTF-8", "-Xmaxerrs", "100000", "-Xmaxwarns", "0", "-nowarn",
                "-implicit:none",
                // attribution and flow go on despite errors: a missing library costs its own
                // sites only
                "-XDshould-stop.ifError=FLOW", "-XDshould-stop.ifNoError=FLOW"));
        List<Path> sources = new ArrayList<>();
        for (String rel : all) {
            if (module != null && rel.endsWith("module-info.java")) {
                continue;  // a patch may not declare its module again
            }
            sources.add(root.resolve(rel));
        }
        if (module != null) {
            options.add("--patch-module");
            options.add(module + "=" + root);
            System.err.println("[java_oracle] compiling as a patch of module " + module);
        }

        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8);
        JavacTask task = (JavacTask) compiler.getTask(null, files, diagnostics, options, null,
                files.getJavaFileObjectsFromPaths(sources));
        Iterable<? extends CompilationUnitTree> units = task.parse();
        task.analyze();

        Map<String, Integer> errorsByFile = new HashMap<>();
        int errors = 0;
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() == Diagnostic.Kind.ERROR) {
                errors++;
                if (d.getSource() != null) {
                    errorsByFile.merge(relative(root, Path.of(d.getSource().toUri())), 1, Integer::sum);
                }
            }
        }
        System.err.println("[java_oracle] " + sources.size() + " files compiled, " + errors + " errors");

        try (BufferedWriter writer = Files.newBufferedWriter(Path.of(opts.get("--out")), StandardCharsets.UTF_8)) {
            JavaOracle oracle = new JavaOracle(root, task, errorsByFile, writer);
            for (CompilationUnitTree unit : units) {
                String rel = relative(root, Path.of(unit.getSourceFile().toUri()));
                if (examine.remove(rel)) {
                    oracle.examine(unit, rel);
                }
            }
            for (String rel : examine) {  // a patch's module-info.java: not compiled, no sites
                writer.write("{\"kind\":\"file\",\"path\":" + quote(rel) + ",\"sites\":0,\"resolved\":0,"
                        + "\"external\":0,\"errors\":0,\"compiled\":0}\n");
            }
        }
    }

    private static List<String> readList(Path listing) throws IOException {
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(listing, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                out.add(line.strip());
            }
        }
        return out;
    }

    private static String relative(Path root, Path file) {
        try {
            return root.relativize(file.toRealPath()).toString().replace('\\', '/');
        } catch (IOException e) {
            return root.relativize(file.toAbsolutePath().normalize()).toString().replace('\\', '/');
        }
    }

    /** The JDK module that already holds the corpus's packages, if any (the JDK's own sources). */
    private static String owningModule(Path root, List<String> all) throws IOException {
        Map<String, String> moduleOfPackage = new HashMap<>();
        for (ModuleReference ref : ModuleFinder.ofSystem().findAll()) {
            for (String pkg : ref.descriptor().packages()) {
                moduleOfPackage.put(pkg, ref.descriptor().name());
            }
        }
        Map<String, Integer> votes = new LinkedHashMap<>();
        for (String rel : all) {
            Matcher m = PACKAGE.matcher(Files.readString(root.resolve(rel), StandardCharsets.ISO_8859_1));
            if (m.find() && moduleOfPackage.containsKey(m.group(1))) {
                votes.merge(moduleOfPackage.get(m.group(1)), 1, Integer::sum);
            }
        }
        return votes.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse(null);
    }

    // ------------------------------------------------------------------ examining one file

    private final class Scanner extends TreePathScanner<Void, Void> {
        final CompilationUnitTree unit;
        final String rel;
        final List<String> rows = new ArrayList<>();
        int sites;
        int resolved;
        int external;

        Scanner(CompilationUnitTree unit, String rel) {
            this.unit = unit;
            this.rel = rel;
        }

        @Override
        public Void visitMethodInvocation(MethodInvocationTree node, Void unused) {
            if (positions.getEndPosition(unit, node) <= 0) {
                return super.visitMethodInvocation(node, unused);  // `super()` javac adds to a constructor
            }
            ExpressionTree callee = node.getMethodSelect();
            String name = calleeName(callee);
            long at = namePosition(callee, name);
            site(trees.getElement(new TreePath(getCurrentPath(), callee)), name, at);
            return super.visitMethodInvocation(node, unused);
        }

        @Override
        public Void visitNewClass(NewClassTree node, Void unused) {
            TreePath parent = getCurrentPath().getParentPath();
            if (parent.getLeaf() instanceof VariableTree v && v.getInitializer() == node
                    && trees.getElement(parent).getKind() == ElementKind.ENUM_CONSTANT) {
                return super.visitNewClass(node, unused);  // an enum constant: javac's `new`, not the source's
            }
            Tree type = node.getIdentifier();
            while (type instanceof ParameterizedTypeTree || type instanceof AnnotatedTypeTree) {
                type = type instanceof ParameterizedTypeTree p ? p.getType() : ((AnnotatedTypeTree) type).getUnderlyingType();
            }
            String name = calleeName(type);
            long at = namePosition(type, name);
            Element target = trees.getElement(getCurrentPath());
            if (target != null && node.getClassBody() != null) {
                target = trees.getElement(new TreePath(getCurrentPath(), type));  // anonymous: its supertype
            }
            site(target, name, at);
            return super.visitNewClass(node, unused);
        }

        @Override
        public Void visitClass(ClassTree node, Void unused) {
            Element self = trees.getElement(getCurrentPath());
            if (self != null && node.getSimpleName().length() > 0) {
                def(node, self.getSimpleName().toString(), kindName(self.getKind()));
            }
            if (node.getSimpleName().length() == 0) {
                // anonymous: javac fills in the supertype its `new` names, the call row's target
                return super.visitClass(node, unused);
            }
            boolean isInterface = node.getKind() == Tree.Kind.INTERFACE || node.getKind() == Tree.Kind.ANNOTATION_TYPE;
            if (node.getExtendsClause() != null) {
                supertype(node.getExtendsClause(), "extends");
            }
            for (Tree t : node.getImplementsClause()) {
                supertype(t, isInterface ? "extends" : "implements");
            }
            return super.visitClass(node, unused);
        }

        @Override
        public Void visitMethod(MethodTree node, Void unused) {
            if (isGenerated(node)) {
                return null;  // a default constructor: its `super()` is no site of the source
            }
            Element self = trees.getElement(getCurrentPath());
            if (self != null) {
                boolean constructor = self.getKind() == ElementKind.CONSTRUCTOR;
                def(node, constructor ? self.getEnclosingElement().getSimpleName().toString() : self.getSimpleName().toString(),
                        constructor ? "constructor" : "method");
            }
            return super.visitMethod(node, unused);
        }

        private void supertype(Tree clause, String relation) {
            Tree type = clause;
            while (type instanceof ParameterizedTypeTree || type instanceof AnnotatedTypeTree) {
                type = type instanceof ParameterizedTypeTree p ? p.getType() : ((AnnotatedTypeTree) type).getUnderlyingType();
            }
            String name = calleeName(type);
            long at = namePosition(type, name);
            Element target = trees.getElement(new TreePath(getCurrentPath(), type));
            Declared declared = declaration(target);
            if (declared != null) {
                rows.add(link("extends", name, at, declared) + ",\"relation\":\"" + relation + "\"}");
            }
        }

        private void site(Element target, String name, long at) {
            sites++;
            if (target == null || isError(target)) {
                rows.add(position("unresolved", name, at) + ",\"reason\":\"unattributed\"}");
                return;
            }
            resolved++;
            if (target.getKind() == ElementKind.CONSTRUCTOR) {
                target = target.getEnclosingElement();
            }
            Declared declared = declaration(target);
            if (declared == null) {
                external++;
                return;
            }
            rows.add(link("call", name, at, declared) + "}");
        }

        private void def(Tree node, String name, String type) {
            long at = ((JCTree) node).pos;  // the declaration's name
            rows.add(position("def", name, at) + ",\"def_type\":\"" + type + "\"}");
        }

        private String position(String kind, String name, long at) {
            long line = unit.getLineMap().getLineNumber(at);
            long col = unit.getLineMap().getColumnNumber(at) - 1;
            return "{\"kind\":\"" + kind + "\",\"path\":" + quote(rel) + ",\"line\":" + line + ",\"col\":" + col
                    + ",\"name\":" + quote(name);
        }

        private String link(String kind, String name, long at, Declared target) {
            return position(kind, name, at) + ",\"target_path\":" + quote(target.path) + ",\"target_line\":"
                    + target.line + ",\"target_name\":" + quote(target.name);
        }

        /** Where the callee's name starts: `c` of `a.b.c`, the identifier itself otherwise. */
        private long namePosition(Tree callee, String name) {
            if (callee instanceof MemberSelectTree) {
                long end = positions.getEndPosition(unit, callee);
                if (end > 0) {
                    return end - name.length();
                }
            }
            return positions.getStartPosition(unit, callee);
        }
    }

    private record Declared(String path, long line, String name) {
    }

    /** Where ``element`` is declared in the corpus, or null (a library's, or no source). */
    private Declared declaration(Element element) {
        if (element == null || isError(element)) {
            return null;
        }
        TreePath path = trees.getPath(element);
        if (path == null) {
            return null;
        }
        String file = relative(root, Path.of(path.getCompilationUnit().getSourceFile().toUri()));
        if (file.startsWith("..")) {
            return null;
        }
        Tree decl = path.getLeaf();
        if (decl instanceof MethodTree m && isGenerated(m)) {
            decl = path.getParentPath().getLeaf();  // a default constructor: its class
        }
        long at = ((JCTree) decl).pos;
        long line = path.getCompilationUnit().getLineMap().getLineNumber(at);
        String name = element.getKind() == ElementKind.CONSTRUCTOR
                ? element.getEnclosingElement().getSimpleName().toString()
                : element.getSimpleName().toString();
        return new Declared(file, line, name);
    }

    private static boolean isGenerated(MethodTree node) {
        // javac adds default constructors to the tree, positioned at their class
        return (((JCTree.JCMethodDecl) node).mods.flags & Flags.GENERATEDCONSTR) != 0;
    }

    private static boolean isError(Element element) {
        TypeMirror type = element.asType();
        if (type != null && type.getKind() == TypeKind.ERROR) {
            return true;
        }
        return element instanceof ExecutableElement e && e.getEnclosingElement() != null
                && e.getEnclosingElement().asType().getKind() == TypeKind.ERROR;
    }

    private static String kindName(ElementKind kind) {
        return switch (kind) {
            case INTERFACE, ANNOTATION_TYPE -> "interface";
            case ENUM -> "enum";
            case RECORD -> "record";
            default -> "class";
        };
    }

    private static String calleeName(Tree callee) {
        if (callee instanceof IdentifierTree id) {
            return id.getName().toString();  // also `this` and `super` of a constructor call
        }
        if (callee instanceof MemberSelectTree sel) {
            return sel.getIdentifier().toString();
        }
        return callee.toString();
    }

    private void examine(CompilationUnitTree unit, String rel) throws IOException {
        Scanner scanner = new Scanner(unit, rel);
        scanner.scan(unit, null);
        for (String row : scanner.rows) {
            out.write(row);
            out.write('\n');
        }
        out.write("{\"kind\":\"file\",\"path\":" + quote(rel) + ",\"sites\":" + scanner.sites + ",\"resolved\":"
                + scanner.resolved + ",\"external\":" + scanner.external + ",\"errors\":"
                + errorsByFile.getOrDefault(rel, 0) + "}\n");
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
