"""Independent reference for k3lab's Python binding analysis (validate/python_module.hpp).

Reads the files named on stdin (one path per line, relative to argv[1]) with Python's own parser and
prints one JSON line per file: the module-level bindings k3lab's reader must find, in source order.
"""
import ast
import json
import sys

BLOCKS = (ast.If, ast.Try, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)


def module_name(path):
    name = path[:-3].replace("/", ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def resolve(module, is_package, level, target):
    if level == 0:
        return target
    package = module if is_package else module.rsplit(".", 1)[0]
    for _ in range(level - 1):
        if "." not in package:
            return "." * level + (target or "")
        package = package.rsplit(".", 1)[0]
    return package + "." + target if target else package


def target_names(node):
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for elt in node.elts for n in target_names(elt)]
    if isinstance(node, ast.Starred):
        return target_names(node.value)
    return []


def parameters(args):
    names = [a.arg for a in args.posonlyargs + args.args]
    if args.vararg:
        names.append("*" + args.vararg.arg)
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg:
        names.append("**" + args.kwarg.arg)
    return names


def walk(body, module, is_package, conditional, out, state):
    for node in body:
        line = node.lineno
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append([node.name, "function", line, "", "", parameters(node.args), conditional])
        elif isinstance(node, ast.ClassDef):
            out.append([node.name, "class", line, "", "", [], conditional])
        elif isinstance(node, ast.ImportFrom):
            source = resolve(module, is_package, node.level, node.module)
            for alias in node.names:
                if alias.name == "*":
                    state["star"] = True
                    continue
                out.append([alias.asname or alias.name, "import_from", line, source, alias.name, [], conditional])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                out.append([bound, "import_module", line, alias.name, "", [], conditional])
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name in target_names(target):
                    out.append([name, "assignment", line, "", "", [], conditional])
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            if isinstance(node.target, ast.Name) and (isinstance(node, ast.AugAssign) or node.value is not None):
                out.append([node.target.id, "assignment", line, "", "", [], conditional])
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out.append([target.id, "deletion", line, "", "", [], conditional])
        elif isinstance(node, BLOCKS):
            if isinstance(node, (ast.For, ast.AsyncFor)):
                for name in target_names(node.target):
                    out.append([name, "assignment", line, "", "", [], True])
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        for name in target_names(item.optional_vars):
                            out.append([name, "assignment", line, "", "", [], True])
            walk(node.body, module, is_package, True, out, state)
            for handler in getattr(node, "handlers", []):
                if handler.name:
                    out.append([handler.name, "assignment", handler.lineno, "", "", [], True])
                walk(handler.body, module, is_package, True, out, state)
            walk(getattr(node, "orelse", []), module, is_package, True, out, state)
            walk(getattr(node, "finalbody", []), module, is_package, True, out, state)


def main():
    root = sys.argv[1]
    for path in sys.stdin.read().split():
        with open(f"{root}/{path}", encoding="utf-8") as f:
            tree = ast.parse(f.read())
        out, state = [], {"star": False}
        walk(tree.body, module_name(path), path.endswith("__init__.py"), False, out, state)
        print(json.dumps({"path": path, "star": state["star"], "bindings": out}))


main()
