import { useState } from 'preact/hooks';

/**
 * The sign-in form: one password input named `api_key`. The key is checked by the first API
 * call of the view that opens; it is kept in sessionStorage only.
 */
export function SignIn(props: { message: string | undefined; onSignIn: (key: string) => void }) {
  const [key, setKey] = useState('');
  const [empty, setEmpty] = useState(false);
  return (
    <main id="main" class="sign-in">
      <h1>monitor</h1>
      {props.message !== undefined && (
        <p role="alert" class="notice">
          {props.message}
        </p>
      )}
      <form
        method="post"
        action="#"
        onSubmit={(event) => {
          event.preventDefault();
          const trimmed = key.trim();
          if (trimmed === '') {
            setEmpty(true);
            return;
          }
          props.onSignIn(trimmed);
        }}
      >
        <label for="api_key">API key</label>
        <input
          id="api_key"
          name="api_key"
          type="password"
          autocomplete="current-password"
          required
          aria-invalid={empty}
          aria-describedby="api_key_help"
          value={key}
          onInput={(event) => {
            setKey(event.currentTarget.value);
            setEmpty(false);
          }}
        />
        <p id="api_key_help" class="help">
          {empty
            ? 'Enter an API key.'
            : 'A key with the read scope; write is needed to change rules and silences. Kept in this tab only.'}
        </p>
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
