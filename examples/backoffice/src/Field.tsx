import type { ReactNode } from "react";

// Field is a form's input with its label above it.
export function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <label className="field">
      <span>{label}</span>
      {children}
    </label>
  );
}
