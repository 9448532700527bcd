import { COMMANDS, GROUPS } from './commands.js';
import { GLOBAL_FLAGS } from './program.js';

/**
 * `deskctl completion bash|zsh`: a completion script generated from the command tree, so it never
 * lags behind a new command or flag. It completes command words, then the flags of the command
 * typed so far (and the global flags). Commander has no completion of its own; the completion
 * packages built on it are unmaintained, and the whole tree fits in a case statement.
 */
const EXTRA: Record<string, string> = {
  batch: 'run commands from standard input',
  completion: 'print a shell completion script',
  seed: 'fill a running stack with the demo data set',
  help: 'show help for a command',
};

interface Node {
  /** Subcommand names with what they do (groups), or flags (commands). */
  words: { word: string; description: string }[];
}

function tree(): Map<string, Node> {
  const nodes = new Map<string, Node>();
  const add = (path: string, word: string, description: string) => {
    const node = nodes.get(path) ?? { words: [] };
    if (!node.words.some((w) => w.word === word)) node.words.push({ word, description });
    nodes.set(path, node);
  };
  for (const [name, command] of Object.entries(COMMANDS)) {
    const words = name.split(' ');
    for (let i = 0; i < words.length; i++) {
      const path = words.slice(0, i).join(' ');
      const here = words.slice(0, i + 1).join(' ');
      add(path, words[i], i === words.length - 1 ? command.description : (GROUPS[here] ?? ''));
    }
    for (const [flag, spec] of Object.entries(command.options))
      if (!spec.hidden) add(name, `--${flag}`, spec.description);
    nodes.set(name, nodes.get(name) ?? { words: [] });
  }
  for (const [word, description] of Object.entries(EXTRA)) add('', word, description);
  add('completion', 'bash', 'bash');
  add('completion', 'zsh', 'zsh');
  return nodes;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const known = (nodes: Map<string, Node>) => `|${[...nodes.keys()].filter(Boolean).join('|')}|`;

/**
 * The loop that finds the command typed so far: the words before the cursor that extend a known
 * command path (flags and their values skipped). bash and zsh differ only in the array's name and
 * where its words start.
 */
const walk = (array: string, from: number, cursor: string) => `  for ((i = ${from}; i < ${cursor}; i++)); do
    w="\${${array}[i]}"
    [[ $w == -* ]] && continue
    next="\${cmdpath:+$cmdpath }$w"
    [[ $known == *"|$next|"* ]] && cmdpath="$next"
  done`;

function bash(): string {
  const nodes = tree();
  const cases = [...nodes.entries()]
    .map(([path, node]) => `    ${quote(path)}) words=${quote(node.words.map((w) => w.word).join(' '))} ;;`)
    .join('\n');
  return `# bash completion for deskctl: source it, e.g. from ~/.bashrc:
#   source <(npm run -s deskctl -- completion bash)
_deskctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmdpath="" next w i words
  local known=${quote(known(nodes))}
${walk('COMP_WORDS', 1, 'COMP_CWORD')}
  case "$cmdpath" in
${cases}
    *) words="" ;;
  esac
  if [[ $cur == -* ]]; then words="$words ${GLOBAL_FLAGS.join(' ')}"; fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _deskctl deskctl
`;
}

function zsh(): string {
  const nodes = tree();
  const item = (w: { word: string; description: string }) =>
    quote(`${w.word.replace(/:/g, '\\:')}:${w.description}`);
  const cases = [...nodes.entries()]
    .map(([path, node]) => `    (${quote(path)}) candidates=(${node.words.map(item).join(' ')}) ;;`)
    .join('\n');
  return `#compdef deskctl
# zsh completion for deskctl: save it as _deskctl in a directory on $fpath, e.g.
#   npm run -s deskctl -- completion zsh > ~/.zfunc/_deskctl   (with fpath=(~/.zfunc $fpath) before compinit)
_deskctl() {
  local cmdpath="" next w i
  local -a candidates
  local known=${quote(known(nodes))}
${walk('words', 2, 'CURRENT')}
  case "$cmdpath" in
${cases}
    (*) candidates=() ;;
  esac
  if [[ \${words[CURRENT]} == -* ]]; then candidates+=(${GLOBAL_FLAGS.map((f) => quote(f)).join(' ')}); fi
  _describe 'deskctl' candidates
}
_deskctl "$@"
`;
}

export const completionScript = (shell: 'bash' | 'zsh') => (shell === 'bash' ? bash() : zsh());
