// An ES module assert of javascript_files.yaml.
export default function (output) {
  return output.endsWith('world');
}
export function shouting(output) {
  return output === output.toUpperCase();
}
