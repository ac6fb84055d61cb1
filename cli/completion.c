/* Shell completion: `tau completion bash|zsh|fish` prints a script that asks
 * the binary itself what may come next (`tau __complete WORD... CURRENT`),
 * so completion always matches the command tree of the tau in use.
 *
 * __complete prints one candidate per line ("word<TAB>description"), then a
 * directive line: ":file" (complete file names instead) or ":none". */
#include <string.h>

#include "commands.h"

static const char tau_bash_script[] =
    "# bash completion for tau: source <(tau completion bash)\n"
    "# or: tau completion bash > /etc/bash_completion.d/tau\n"
    "_tau_complete() {\n"
    "    local cur words cword\n"
    "    if declare -F _get_comp_words_by_ref >/dev/null 2>&1; then\n"
    "        _get_comp_words_by_ref -n =: cur words cword\n"
    "    else\n"
    "        cur=${COMP_WORDS[COMP_CWORD]}\n"
    "        words=(\"${COMP_WORDS[@]}\")\n"
    "        cword=$COMP_CWORD\n"
    "    fi\n"
    "    local out cands directive c\n"
    "    out=$(\"${words[0]}\" __complete \"${words[@]:1:cword}\" 2>/dev/null) || return 0\n"
    "    directive=${out##*$'\\n'}\n"
    "    cands=\n"
    "    [[ $out == *$'\\n'* ]] && cands=${out%$'\\n'*}\n"
    "    COMPREPLY=()\n"
    "    if [[ $directive == :file ]]; then\n"
    "        compopt -o default 2>/dev/null\n"
    "        return 0\n"
    "    fi\n"
    "    local IFS=$'\\n'\n"
    "    for c in $cands; do\n"
    "        c=${c%%$'\\t'*}\n"
    "        [[ $c == \"$cur\"* ]] && COMPREPLY+=(\"$c\")\n"
    "    done\n"
    "    if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]]; then\n"
    "        compopt -o nospace 2>/dev/null\n"
    "    fi\n"
    "    return 0\n"
    "}\n"
    "complete -F _tau_complete tau\n";

static const char tau_zsh_script[] =
    "#compdef tau\n"
    "# zsh completion for tau: tau completion zsh > \"${fpath[1]}/_tau\"\n"
    "# or, in ~/.zshrc after compinit: source <(tau completion zsh)\n"
    "_tau() {\n"
    "    local out directive c\n"
    "    local -a lines cands\n"
    "    out=$(${words[1]} __complete \"${(@)words[2,CURRENT]}\" 2>/dev/null) || return 1\n"
    "    lines=(\"${(@f)out}\")\n"
    "    directive=${lines[-1]}\n"
    "    lines=(\"${(@)lines[1,-2]}\")\n"
    "    if [[ $directive == :file ]]; then\n"
    "        _files\n"
    "        return\n"
    "    fi\n"
    "    for c in $lines; do\n"
    "        if [[ $c == *$'\\t'* ]]; then\n"
    "            cands+=(\"${${c%%$'\\t'*}//:/\\\\:}:${c#*$'\\t'}\")\n"
    "        else\n"
    "            cands+=(\"${c//:/\\\\:}\")\n"
    "        fi\n"
    "    done\n"
    "    _describe -t tau 'tau' cands\n"
    "}\n"
    "if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then\n"
    "    _tau \"$@\"\n"
    "else\n"
    "    compdef _tau tau\n"
    "fi\n";

static const char tau_fish_script[] =
    "# fish completion for tau: tau completion fish > ~/.config/fish/completions/tau.fish\n"
    "function __tau_complete\n"
    "    set -l tokens (commandline -opc)\n"
    "    set -l cmd $tokens[1]\n"
    "    set -e tokens[1]\n"
    "    set -l cur (commandline -ct)\n"
    "    set -l out ($cmd __complete $tokens $cur 2>/dev/null)\n"
    "    test (count $out) -gt 0; or return\n"
    "    set -l directive $out[-1]\n"
    "    set -e out[-1]\n"
    "    if test \"$directive\" = :file\n"
    "        __fish_complete_path $cur\n"
    "        return\n"
    "    end\n"
    "    printf '%s\\n' $out\n"
    "end\n"
    "complete -c tau -f -a '(__tau_complete)'\n";

int tau_cmd_completion(tau_ctx_t *ctx, const tau_args_t *a)
{
    static const struct {
        const char *shell, *script;
    } shells[] = {{"bash", tau_bash_script}, {"zsh", tau_zsh_script}, {"fish", tau_fish_script}};
    for (size_t i = 0; i < TG_ARRAY_LEN(shells); i++)
        if (strcmp(a->pos[0], shells[i].shell) == 0) {
            fputs(shells[i].script, stdout);
            return TAU_EXIT_OK;
        }
    return tau_usage_error(ctx, "no completion for '%s' (bash, zsh or fish)", a->pos[0]);
}

/* ---- __complete ------------------------------------------------------------------------- */

/* The option `word` names ("--output", "--output=json", "-o"), looked up in
 * the command's table, then the global one. */
static const tau_opt_t *comp_find_opt(const tau_cmd_t *cmd, const char *word)
{
    const tau_opt_t *tables[2] = {cmd->opts, tau_global_opts};
    for (int t = 0; t < 2; t++)
        for (const tau_opt_t *o = tables[t]; o && o->name; o++) {
            if (word[1] == '-') {
                size_t n = strcspn(word + 2, "=");
                if (strlen(o->name) == n && strncmp(o->name, word + 2, n) == 0)
                    return o;
            } else if (o->short_name && word[1] == o->short_name) {
                return o;
            }
        }
    return NULL;
}

static void comp_line(const char *word, const char *desc)
{
    fputs(word, stdout);
    if (desc && *desc)
        printf("\t%s", desc);
    fputc('\n', stdout);
}

/* An option's value: the output formats, shells, or file names. */
static const char *comp_value(const tau_opt_t *o)
{
    if (strcmp(o->name, "output") == 0) {
        comp_line("table", "aligned columns (default)");
        comp_line("wide", "more columns");
        comp_line("json", "the server's answer as JSON");
        comp_line("yaml", "the server's answer as YAML");
        comp_line("jsonpath=", "a kubectl JSONPath template");
        return ":none";
    }
    if (o->arg && (strstr(o->arg, "FILE") || strstr(o->arg, "DIR") || strcmp(o->arg, "OUT") == 0))
        return ":file";
    return ":none";
}

/* The long options of `cmd` and the global ones it does not shadow. */
static void comp_options(const tau_cmd_t *cmd)
{
    char word[80];
    for (const tau_opt_t *o = cmd->opts; o && o->name; o++)
        if (o->help) {
            snprintf(word, sizeof(word), "--%s", o->name);
            comp_line(word, o->help);
        }
    for (const tau_opt_t *o = tau_global_opts; o->name; o++) {
        int shadowed = 0;
        for (const tau_opt_t *c = cmd->opts; c && c->name; c++)
            shadowed |=
                strcmp(c->name, o->name) == 0 || (o->short_name && c->short_name == o->short_name);
        if (!shadowed && o->help) {
            snprintf(word, sizeof(word), "--%s", o->name);
            comp_line(word, o->help);
        }
    }
}

int tau_complete(const tau_cmd_t *root, int n, char **words)
{
    /* words: what follows "tau __complete"; the last is the word being typed */
    const tau_cmd_t *cmd = root;
    int only_pos = 0;
    const char *cur = n > 0 ? words[n - 1] : "";
    const tau_opt_t *pending = NULL; /* the option whose value comes next */
    for (int i = 0; i + 1 < n; i++) {
        const char *w = words[i];
        pending = NULL;
        if (!only_pos && strcmp(w, "--") == 0) {
            only_pos = 1;
        } else if (!only_pos && w[0] == '-' && w[1]) {
            const tau_opt_t *o = comp_find_opt(cmd, w);
            int inline_value = w[1] == '-' ? strchr(w, '=') != NULL : w[2] != '\0';
            if (o && o->arg && !inline_value)
                pending = o;
        } else if (cmd->subs) {
            for (const tau_cmd_t *c = cmd->subs; c->name; c++)
                if (strcmp(c->name, w) == 0) {
                    cmd = c;
                    break;
                }
        }
        if (pending && i + 2 < n) { /* the value is a word before the current one */
            i++;
            pending = NULL;
        }
    }
    const char *directive = ":none";
    if (pending) {
        directive = comp_value(pending);
    } else if (!only_pos && cur[0] == '-') {
        comp_options(cmd);
    } else if (cmd->subs) {
        for (const tau_cmd_t *c = cmd->subs; c->name; c++)
            if (c->summary)
                comp_line(c->name, c->summary);
    } else if (strcmp(cmd->name, "completion") == 0) {
        comp_line("bash", NULL);
        comp_line("zsh", NULL);
        comp_line("fish", NULL);
    } else if (cmd->usage && strstr(cmd->usage, "FILE]")) {
        directive = ":file";
    }
    puts(directive);
    return TAU_EXIT_OK;
}
