// Dialogs and the side drawer on the native <dialog>: modal, focus kept
// inside, Escape closes, focus returns to where it was.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

let seq = 0;

export function Dialog(props: { open: boolean; onClose(): void; title: string; children: ComponentChildren; drawer?: boolean; actions?: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  const idRef = useRef(`dlg-${++seq}`);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  if (!props.open) return <dialog ref={ref} />;
  return (
    <dialog
      ref={ref}
      class={props.drawer ? 'drawer' : 'dialog'}
      aria-labelledby={idRef.current}
      onCancel={(e) => {
        // Escape asks; the owner decides (the re-auth dialog stays).
        e.preventDefault();
        props.onClose();
      }}
    >
      <div class="dialog-head">
        <h2 id={idRef.current}>{props.title}</h2>
        <button type="button" class="icon" aria-label="Close" onClick={props.onClose}>
          ×
        </button>
      </div>
      <div class="dialog-body">{props.children}</div>
      {props.actions ? <div class="dialog-actions">{props.actions}</div> : null}
    </dialog>
  );
}
