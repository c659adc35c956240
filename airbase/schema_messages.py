"""Reading a YAML document and saying in one line per problem where it breaks its JSON
schema ("FILE: where.in.it: what is wrong"), the same way for experiments, profiles, setups,
claims and the workflow's config."""
import jsonschema
import yaml


def read_yaml(path, error=ValueError):
    """The document at path; an unreadable file or bad YAML raises error("PATH: ...")."""
    try:
        with open(path) as f:
            return yaml.safe_load(f)
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror}") from None
    except yaml.YAMLError as e:  # one line: where, and what
        mark = getattr(e, "problem_mark", None)
        place = f"line {mark.line + 1}" if mark else "YAML"
        raise error(f"{path}: {place}: not valid YAML: {getattr(e, 'problem', None) or e}") from None


def _deepest(err):
    """The innermost error under a oneOf/anyOf: the value that is actually wrong."""
    best = err
    for sub in err.context or ():
        d = _deepest(sub)
        if len(d.absolute_path) > len(best.absolute_path):
            best = d
    return best


def explained(err):
    """(path, message) of a schema error, in words a file's author understands. Under a
    oneOf/anyOf whose alternatives carry a description (a count), the innermost wrong value
    and that description, not jsonschema's 'is not valid under any of the given schemas'."""
    if err.validator in ("oneOf", "anyOf") and err.context:
        e = _deepest(err)
        while e is not None:  # the innermost described schema around the wrong value
            if "description" in e.schema:
                return list(e.absolute_path), f"{e.instance!r} is not {e.schema['description']}"
            e = e.parent
    return list(err.absolute_path), message(err)


def message(err):
    """One error's message, without looking inside a oneOf/anyOf."""
    if err.validator == "not" and "description" in err.schema:
        return err.schema["description"]
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        return f"unknown field{'s' if len(extra) > 1 else ''} {', '.join(extra)}"
    if err.validator == "required":
        return err.message.replace("is a required property", "is required")
    if err.validator == "enum":
        return f"{err.instance!r} is not one of {', '.join(map(str, err.validator_value))}"
    bounds = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
    if err.validator in bounds:
        return f"{err.instance!r} is out of range: it must be {bounds[err.validator]} {err.validator_value}"
    return err.message


def where(path):
    """An error's place in the document: 'processes[0].ctp_us', '(top level)'."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def schema_errors(schema, data, source, place=where):
    """One 'SOURCE: WHERE: MESSAGE' line per error, in document order ([] = valid). place(path)
    names the place (a claims file names a claim by its id instead of its index)."""
    validator = schema if hasattr(schema, "iter_errors") else jsonschema.Draft202012Validator(schema)
    errs = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{source}: {place(path)}: {msg}" for path, msg in map(explained, errs)]
