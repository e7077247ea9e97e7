// The model picker of the pages that make something with a model the key may use (Pictures, 3D).
export function ModelSelect({ label, models }: { label: string; models: string[] }) {
  return (
    <label>
      {label}{" "}
      <select name="model" disabled={!models.length}>
        {models.map((m) => (
          <option key={m} value={m}>
            {m}
          </option>
        ))}
      </select>
    </label>
  );
}
