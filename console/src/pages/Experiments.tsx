// Experiments (tau.yaml's experiment.project / name / group).
import { href } from '../router';

export function Experiments({ ws }: { ws: string }) {
  return (
    <div class="page">
      <h1>Experiments in {ws}</h1>
      <p>
        This gateway does not list experiments yet. Runs keep their experiment identity; find them on the <a href={href(`/w/${ws}/runs`)}>runs page</a> and compare them from there.
      </p>
    </div>
  );
}
