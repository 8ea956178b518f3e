// javac's own parser's methods and constructors, for bench/signatures.py: for each file named
// on stdin (one path a line), one JSON line per method, constructor and annotation element:
// {file, line (1-based, of its name), name (a constructor's is its class's),
// parameters: [{name, type, variadic, receiver}], returns, typeParameters, annotations}.
// A receiver parameter (`Foo this`) comes first, as javac keeps it apart; a variadic
// `String... rest` has type String; dimensions after a name are the type's (`byte b[]`:
// byte[], `int m()[]` returns int[]); returns is null for a constructor; annotations are the
// method's own, without their `@`. Texts as written, each run of whitespace one space (the
// dimensions joined to their type). A file javac reports a syntax error in is one line
// {file, error}.
// Usage: java --add-exports jdk.compiler/com.sun.tools.javac.{tree,code}=ALL-UNNAMED
//        JavaSignatures < files
import com.sun.source.tree.AnnotationTree;
import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.TypeParameterTree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreeScanner;
import com.sun.source.util.Trees;
import com.sun.tools.javac.code.Flags;
import com.sun.tools.javac.tree.JCTree;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public final class JavaSignatures {
    private final BufferedWriter out;
    private final SourcePositions positions;
    private CompilationUnitTree unit;
    private String source;
    private String file;

    private JavaSignatures(BufferedWriter out, SourcePositions positions) {
        this.out = out;
        this.positions = positions;
    }

    public static void main(String[] args) throws IOException {
        List<String> paths = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (!line.isEmpty()) paths.add(line);
        }
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8);
        // --enable-preview and the newest release: a corpus may use any syntax javac 17 reads
        List<String> options = List.of("-proc:none", "--release", "17", "--enable-preview");
        JavacTask task = (JavacTask) compiler.getTask(null, files, diagnostics, options, null,
                files.getJavaFileObjectsFromStrings(paths));
        Iterable<? extends CompilationUnitTree> units = task.parse();
        Set<String> rejected = new HashSet<>();
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() == Diagnostic.Kind.ERROR && d.getSource() != null
                    && rejected.add(d.getSource().getName())) {
                out.write("{\"file\":" + quote(d.getSource().getName()) + ",\"error\":"
                        + quote(d.getMessage(null)) + "}\n");
            }
        }
        JavaSignatures writer = new JavaSignatures(out, Trees.instance(task).getSourcePositions());
        for (CompilationUnitTree unit : units) {
            String name = unit.getSourceFile().getName();
            if (rejected.contains(name)) continue;
            writer.unit = unit;
            writer.file = name;
            writer.source = unit.getSourceFile().getCharContent(true).toString();
            writer.scan();
        }
        out.flush();
    }

    private void scan() {
        new TreeScanner<Void, String>() {
            @Override
            public Void visitClass(ClassTree node, String enclosing) {
                return super.visitClass(node, node.getSimpleName().toString());
            }

            @Override
            public Void visitMethod(MethodTree node, String enclosing) {
                try {
                    emit(node, enclosing);
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
                return super.visitMethod(node, enclosing);
            }
        }.scan(unit, null);
    }

    private String text(Tree node) {
        long start = positions.getStartPosition(unit, node), end = positions.getEndPosition(unit, node);
        if (start < 0 || end < start) return null;
        return normalized(source.substring((int) start, (int) end));
    }

    private static String normalized(String written) {
        return String.join(" ", written.trim().split("\\s+"));
    }

    private String parameter(VariableTree p, boolean receiver) {
        boolean variadic = (((JCTree.JCVariableDecl) p).mods.flags & Flags.VARARGS) != 0;
        String type = text(p.getType());
        int name = ((JCTree) p).pos;  // javac's position of the parameter's name
        long start = positions.getStartPosition(unit, p.getType()), end = positions.getEndPosition(unit, p.getType());
        if (!receiver && type != null && start <= name && name < end) {
            // `byte b[]`: javac's array type spans the name; the type is `byte[]`
            type = normalized(source.substring((int) start, name))
                    + normalized(source.substring(name + p.getName().length(), (int) end));
        }
        if (variadic && type != null && type.endsWith("...")) {
            type = type.substring(0, type.length() - 3).trim();
        }
        return "{\"name\":" + quote(receiver ? "this" : p.getName().toString()) + ",\"type\":" + quote(type)
                + ",\"variadic\":" + variadic + ",\"receiver\":" + receiver + "}";
    }

    private String returned(MethodTree node, int name) {
        String type = text(node.getReturnType());
        long start = positions.getStartPosition(unit, node.getReturnType());
        long end = positions.getEndPosition(unit, node.getReturnType());
        if (type == null || name < start || name >= end) return type;
        // `int m()[]`: javac's array type spans the name and parameters; the type is `int[]`
        long listed = name + node.getName().length();
        for (VariableTree p : node.getParameters()) listed = positions.getEndPosition(unit, p);
        int close = source.indexOf(')', (int) listed);
        return normalized(source.substring((int) start, name))
                + normalized(source.substring(close + 1, (int) end));
    }

    private void emit(MethodTree node, String enclosing) throws IOException {
        boolean constructor = node.getName().contentEquals("<init>");
        int at = ((JCTree) node).pos;  // javac's position of a method's name
        List<String> parameters = new ArrayList<>();
        if (node.getReceiverParameter() != null) parameters.add(parameter(node.getReceiverParameter(), true));
        for (VariableTree p : node.getParameters()) parameters.add(parameter(p, false));
        List<String> typeParameters = new ArrayList<>();
        for (TypeParameterTree t : node.getTypeParameters()) typeParameters.add(quote(text(t)));
        List<String> annotations = new ArrayList<>();
        for (AnnotationTree a : node.getModifiers().getAnnotations()) {
            String written = text(a);
            annotations.add(quote(written == null ? null : written.substring(1).trim()));
        }
        out.write("{\"file\":" + quote(file) + ",\"line\":" + unit.getLineMap().getLineNumber(at)
                + ",\"name\":" + quote(constructor ? enclosing : node.getName().toString())
                + ",\"parameters\":[" + String.join(",", parameters) + "]"
                + ",\"returns\":" + quote(constructor ? null : returned(node, at))
                + ",\"typeParameters\":[" + String.join(",", typeParameters) + "]"
                + ",\"annotations\":[" + String.join(",", annotations) + "]}\n");
    }

    private static String quote(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }
}
