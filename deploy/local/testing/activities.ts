/** Activities for the stack's own tests. */
export async function greet(name: string): Promise<string> {
  return Promise.resolve(`hello, ${name}`);
}
