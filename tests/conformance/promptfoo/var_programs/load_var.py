"""Variables made by a program (var_programs.yaml): promptfoo's get_var contract."""


def get_var(var_name, prompt, other_vars):
    role = other_vars.get("role")
    if role == "bad":
        return {"error": f"no such role for {var_name}"}
    if role == "plain":
        return "a string is not a result"
    first_line = prompt.split(":")[0]
    return {"output": f"{var_name} as {role} for {first_line}"}
